import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { errorCodeOf, startBridgeProcess, textOf } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { containerDir, hardeningFlags, loadComposeService } from "./ComposeProfile.js"
import { makePodmanStore, type PodmanStore } from "./PodmanStore.js"

/**
 * The container profile for real: build the image with deploy/container/build-image.sh (FROM
 * scratch, nothing pulled), run it with exactly compose.yaml's hardening keys under a non-root
 * uid, and talk MCP to it over stdio through the SDK client, as a client configured with
 * `podman run -i …` would. Rootful podman with a store of the test's own (PodmanStore).
 */
const IMAGE = "localhost/serverfs-mcp:test"
const USER = "1000:1000"
const podmanPresent = spawnSync("podman", ["--version"]).status === 0
const isRoot = process.getuid?.() === 0
const skipReason = !podmanPresent
  ? "podman is not installed (apt-get install podman runc; .ci/run installs them)"
  : !isRoot
    ? "needs root: the test runs rootful podman with its own image store"
    : undefined

const service = loadComposeService()
let base: string
let workdir: string
let store: PodmanStore

/**
 * A child process run to its end without blocking the worker (a synchronous spawn of minutes would
 * starve vitest's own RPC).
 */
const runToEnd = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.once("error", reject)
    child.once("close", (status) => resolve({ status, stdout, stderr }))
  })

/** An MCP SDK client on a container started by `podman <args>`; stderr collected for failures. */
const connectContainer = async (args: ReadonlyArray<string>) => {
  const transport = new StdioClientTransport({
    command: "podman",
    args: [...args],
    env: store.env,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const client = new Client({ name: "serverfs-container-test", version: "0.0.0" })
  await client.connect(transport).catch((error: unknown) => {
    throw new Error(`${String(error)}\nserver stderr:\n${stderr}`)
  })
  return { client, stderr: () => stderr }
}

/** `podman run` with the compose hardening, the operator's uid and the read-only workdir. */
const runArgs = (extra: ReadonlyArray<string>): Array<string> => [
  "run",
  "--rm",
  "-i",
  ...hardeningFlags(service),
  ...store.hostRunFlags,
  "--user",
  USER,
  "--volume",
  `${workdir}:/workdirs/01:ro`,
  "--env",
  "WORKDIR_01_ALIAS=docs",
  "--env",
  "WORKDIR_01_PATH=/workdirs/01",
  ...extra
]

beforeAll(async () => {
  if (skipReason !== undefined) return
  base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-container-"))
  workdir = path.join(base, "workdir")
  fs.mkdirSync(workdir, { mode: 0o755 })
  fs.chmodSync(workdir, 0o755)
  fs.writeFileSync(path.join(workdir, "hello.txt"), "hello from the host\n", { mode: 0o644 })
  store = makePodmanStore(base)
  // Build once per file: the rootfs is assembled from this checkout's built dist.
  const build = await runToEnd(path.join(containerDir, "build-image.sh"), [IMAGE], store.env)
  if (build.status !== 0) throw new Error(`image build failed (${build.status}):\n${build.stderr}`)
}, 900_000)

afterAll(() => {
  if (skipReason === undefined) store?.remove()
})

describe.skipIf(skipReason !== undefined)(`the serverfs-mcp image (${skipReason ?? "podman"})`, () => {
  it("answers initialize, list_workdirs and a read over stdio under compose's hardening", async () => {
    // connect() is the MCP initialize handshake.
    const { client, stderr } = await connectContainer(runArgs([IMAGE]))
    try {
      expect(client.getServerVersion()?.name).toBe("ServerFS")
      const workdirs = await client.callTool({ name: "list_workdirs", arguments: {} })
      expect(workdirs.structuredContent).toMatchObject({ workdirs: [{ alias: "docs", access: "read-only" }] })
      const read = await client.callTool({
        name: "read_text_file",
        arguments: { workdir: "docs", path: "hello.txt" }
      })
      expect(read.isError ?? false).toBe(false)
      expect(textOf(read)).toContain("hello from the host")
      // A read-only workdir refuses a mutation at the authorization gate, before the mount would.
      const write = await client.callTool({
        name: "create_text_file",
        arguments: { workdir: "docs", path: "new.txt", content: "x" }
      })
      expect(errorCodeOf(textOf(write))).toBe("WORKDIR_READ_ONLY")
    } catch (error) {
      throw new Error(`${String(error)}\nserver stderr:\n${stderr()}`)
    } finally {
      await client.close()
    }
    // The audit went to stderr as JSON lines, and no host path of the workdir appears in it.
    expect(stderr()).toContain('"event":"tool_call"')
    expect(stderr()).not.toContain(workdir)
  }, 300_000)

  it("cannot write its root filesystem, holds no capability, no network, no shell and no provider", async () => {
    // The image has no shell: the probe is node itself, run with the same flags.
    const probe = [
      "const fs = require('node:fs')",
      "const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'written' } catch (e) { return e.code } }",
      "const status = Object.fromEntries(fs.readFileSync('/proc/1/status', 'utf8').split('\\n')",
      "  .filter((l) => /^(Cap|NoNewPrivs|Uid|Gid)/.test(l)).map((l) => l.split(/:\\s+/)))",
      "const packages = ['@openai/codex', '@anthropic-ai/claude-agent-sdk', 'better-sqlite3', 'vitest', 'typescript']",
      "console.log(JSON.stringify({ root: tryWrite('/probe'), app: tryWrite('/app/probe'),",
      "  workdir: tryWrite('/workdirs/01/probe'), status,",
      "  interfaces: Object.keys(require('node:os').networkInterfaces()),",
      "  shells: ['/bin/sh', '/bin/bash', '/usr/bin/sh'].filter((p) => fs.existsSync(p)),",
      "  packages: packages.filter((name) => fs.existsSync('/app/node_modules/' + name)) }))"
    ].join("\n")
    const run = await runToEnd(
      "podman",
      runArgs(["--entrypoint", "/usr/local/bin/node", IMAGE, "-e", probe]),
      store.env
    )
    expect(run.status, run.stderr).toBe(0)
    const seen = JSON.parse(run.stdout.trim()) as {
      readonly root: string
      readonly app: string
      readonly workdir: string
      readonly status: Record<string, string>
      readonly interfaces: ReadonlyArray<string>
      readonly shells: ReadonlyArray<string>
      readonly packages: ReadonlyArray<string>
    }
    expect(seen.root).toBe("EROFS")
    expect(seen.app).toBe("EROFS")
    expect(seen.workdir).toBe("EROFS")
    for (const set of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"])
      expect(seen.status[set], set).toBe("0000000000000000")
    expect(seen.status.NoNewPrivs).toBe("1")
    expect(seen.status.Uid?.split(/\s+/)).toEqual(["1000", "1000", "1000", "1000"])
    expect(seen.status.Gid?.split(/\s+/)[0]).toBe("1000")
    expect(seen.interfaces.filter((name) => name !== "lo")).toEqual([])
    // Spec v0.3 §28: the MCP image carries no provider runtime and no development tooling.
    expect(seen.shells).toEqual([])
    expect(seen.packages).toEqual([])
  }, 300_000)

  it("reaches the host's Agent Bridge through the read-only socket and lock mounts", async () => {
    // The bridge runs on the host (as root here) and admits the container's uid/gid, the shared
    // mode a system install uses; its socket and lock directories are what compose mounts.
    const bridgeDir = path.join(base, "bridge")
    const agentEnv = {
      WORKDIR_01_ALIAS: "docs",
      WORKDIR_01_AGENT_MODE: "review",
      WORKDIR_01_AGENT_RUNTIMES: "fake",
      SERVERFS_AGENT_BRIDGE_ENABLED: "true",
      SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "true"
    }
    const bridge = await startBridgeProcess({
      ...agentEnv,
      WORKDIR_01_PATH: workdir,
      SERVERFS_AGENT_BRIDGE_SOCKET: path.join(bridgeDir, "socket", "bridge.sock"),
      SERVERFS_AGENT_LOCK_DIR: path.join(bridgeDir, "locks"),
      SERVERFS_AGENT_BRIDGE_STATE_DIR: path.join(bridgeDir, "state"),
      SERVERFS_AGENT_PEER_UID: "1000",
      SERVERFS_AGENT_PEER_GID: "1000"
    })
    try {
      const { client, stderr } = await connectContainer(
        runArgs([
          "--volume",
          `${path.join(bridgeDir, "socket")}:/run/serverfs-agent-bridge:ro`,
          "--volume",
          `${path.join(bridgeDir, "locks")}:/run/serverfs-agent-locks:ro`,
          ...Object.entries(agentEnv).flatMap(([name, value]) => ["--env", `${name}=${value}`]),
          IMAGE
        ])
      )
      try {
        const runtimes = await client.callTool({ name: "list_agent_runtimes", arguments: {} })
        expect(runtimes.isError ?? false, `${textOf(runtimes)}\n${stderr()}`).toBe(false)
        // The runtime's version and availability come from the bridge: the server never probes one.
        expect(runtimes.structuredContent).toMatchObject({
          runtimes: [{ name: "fake", available: true, version: "scripted-1" }]
        })
      } finally {
        await client.close()
      }
    } finally {
      await bridge.kill()
    }
  }, 300_000)
})
