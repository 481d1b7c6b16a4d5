import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeTempTree, mcpMain, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeSession, openSession } from "./support.js"

/**
 * The HTTP server's life: SIGTERM lets a call in flight finish and exits 0; many sessions opened
 * and closed leave descriptors and memory flat; a configuration mistake stops startup with exit 2
 * and one line naming the variable (never the token or the file's content).
 */
let tree: TempTree

beforeAll(() => {
  tree = makeTempTree()
  tree.file("a.txt", "alpha\n")
  // A tree big enough that one find_files walk is still running when SIGTERM arrives.
  for (let d = 0; d < 300; d++) {
    const dir = path.join(tree.root, `d${d}`)
    fs.mkdirSync(dir)
    for (let f = 0; f < 200; f++) fs.writeFileSync(path.join(dir, `f${f}.txt`), "")
  }
}, 120_000)
afterAll(() => tree?.remove())

const env = () => ({ WORKDIR_01_ALIAS: "w", WORKDIR_01_PATH: tree.root })

const procNumbers = (pid: number) => ({
  fds: fs.readdirSync(`/proc/${pid}/fd`).length,
  rssKiB: Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)
})

describe("the HTTP server's lifecycle", () => {
  it("finishes a call in flight on SIGTERM, then exits 0", async () => {
    const mcp = await startMcpHttp({ ...env(), SERVERFS_LOG_LEVEL: "DEBUG" })
    try {
      const posts = () => mcp.audit().filter((r) => r.event === "http_request").length
      const before = posts()
      const call = mcp.client.callTool({
        name: "find_files",
        arguments: { workdir: "w", pattern: "**/*.none" }
      })
      // SIGTERM once the server has the call's POST in hand (its walk of 60 000 entries follows).
      await mcp.auditWhen(() => posts() > before, 60_000)
      const exited = mcp.kill("SIGTERM")
      const result = await call
      expect(result.isError).not.toBe(true)
      expect(await exited).toBe(0)
      const records = mcp.audit()
      const requested = records.find((r) => r.event === "shutdown_requested")
      expect(requested?.requests_in_flight).toBeGreaterThanOrEqual(1)
      const events = records.map((r) => r.event)
      expect(events.indexOf("tool_call")).toBeGreaterThan(events.indexOf("shutdown_requested"))
      expect(events.at(-1)).toBe("shutdown")
    } finally {
      await mcp.close()
    }
  }, 180_000)

  it("leaves descriptors and memory flat after 200 sessions opened and closed", async () => {
    const mcp = await startMcpHttp(env(), { connect: false })
    try {
      const cycle = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const id = await openSession(mcp.url)
          expect(typeof id).toBe("string")
          expect(await closeSession(mcp.url, id as string)).toBe(200)
        }
      }
      await cycle(20)
      const before = procNumbers(mcp.pid)
      await cycle(200)
      const after = procNumbers(mcp.pid)
      // Generous bounds: keep-alive sockets and GC timing move both a little.
      expect(after.fds - before.fds).toBeLessThanOrEqual(8)
      expect(after.rssKiB - before.rssKiB).toBeLessThan(64 * 1024)
    } finally {
      await mcp.close()
    }
  }, 240_000)
})

describe("configuration errors of the HTTP transport", () => {
  const run = (extra: Record<string, string>) =>
    spawnSync(process.execPath, [mcpMain], {
      env: { PATH: process.env.PATH ?? "/usr/bin", ...env(), SERVERFS_MCP_TRANSPORT: "http", ...extra },
      encoding: "utf8",
      timeout: 50_000
    })
  const firstLine = (stderr: string) => stderr.split("\n")[0] ?? ""

  it.each([
    [{ SERVERFS_MCP_TRANSPORT: "websocket" }, "SERVERFS_MCP_TRANSPORT"],
    [{ SERVERFS_HTTP_PORT: "70000" }, "SERVERFS_HTTP_PORT"],
    [{ SERVERFS_HTTP_HOST: "example.com" }, "SERVERFS_HTTP_HOST"],
    [{ SERVERFS_HTTP_HOST: "0.0.0.0" }, "SERVERFS_HTTP_ALLOWED_HOSTS"],
    [
      { SERVERFS_HTTP_HOST: "0.0.0.0", SERVERFS_HTTP_ALLOWED_HOSTS: "mcp.example:8765" },
      "SERVERFS_HTTP_TOKEN_FILE"
    ],
    [{ SERVERFS_HTTP_ALLOWED_ORIGINS: "*" }, "SERVERFS_HTTP_ALLOWED_ORIGINS"],
    [{ SERVERFS_HTTP_MAX_BODY_BYTES: "70000" }, "SERVERFS_HTTP_MAX_BODY_BYTES"],
    [{ SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES: "70000" }, "SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES"]
  ])("%o stops startup with exit 2 naming %s", { timeout: 60_000 }, (extra, variable) => {
    const out = run(extra)
    expect(out.status).toBe(2)
    expect(firstLine(out.stderr)).toMatch(new RegExp(`^ServerFS: configuration error: ${variable}: `))
    expect(out.stdout).toBe("")
  })

  it("starts non-loopback without a token only when an authenticating proxy is declared", async () => {
    const mcp = await startMcpHttp(
      {
        ...env(),
        SERVERFS_HTTP_HOST: "0.0.0.0",
        SERVERFS_HTTP_ALLOWED_HOSTS: "mcp.example:8765",
        SERVERFS_HTTP_AUTHENTICATING_PROXY: "true"
      },
      { connect: false }
    )
    await mcp.close()
    expect(await mcp.exited).toBe(0)
  }, 120_000)

  it("refuses a token file that is group-readable, empty or missing, without printing it", () => {
    const secret = "tok-0123456789abcdefXYZ"
    const file = path.join(tree.root, "..", `tok-${process.pid}`)
    try {
      for (const [content, mode] of [
        [secret, 0o640],
        ["", 0o600]
      ] as const) {
        fs.writeFileSync(file, content, { mode })
        fs.chmodSync(file, mode)
        const out = run({ SERVERFS_HTTP_TOKEN_FILE: file })
        expect(out.status).toBe(2)
        expect(firstLine(out.stderr)).toMatch(/^ServerFS: configuration error: SERVERFS_HTTP_TOKEN_FILE: /)
        expect(out.stderr).not.toContain(secret)
        fs.rmSync(file)
      }
      const missing = run({ SERVERFS_HTTP_TOKEN_FILE: file })
      expect(missing.status).toBe(2)
      expect(firstLine(missing.stderr)).toContain("SERVERFS_HTTP_TOKEN_FILE: the named file does not exist")
    } finally {
      fs.rmSync(file, { force: true })
    }
  }, 120_000)
})
