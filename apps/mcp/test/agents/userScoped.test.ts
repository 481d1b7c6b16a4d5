import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type BridgeProcess,
  bridgeMain,
  type McpProcess,
  mcpMain,
  type ReadableCheckout,
  readableCheckout,
  skipWithoutRoot,
  startBridgeProcess,
  startMcp,
  waitForStatus
} from "@serverfs/testkit"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { ok } from "./support.js"

/**
 * Issue 9, item 2 (spec v0.3 §6): "a non-root user with only WORKDIR_* and the Agent variables
 * set starts the bridge and serverfs-mcp and delegates a task (scripted runtime) with no path
 * variable set". Both processes really run as uid/gid 1000 (setpriv, no supplementary groups)
 * with HOME a fresh home of that user and no XDG variable: they must find each other through
 * the user-scoped defaults, the task must succeed through the MCP client, a mutation must take
 * the lease in the same lock directory, and the socket, lock and state files must be where the
 * spec puts them, owned by that user, with the modes of the mode in use.
 *
 * Needs root to switch uid (CI runs as root and installs setpriv: .ci/run).
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

const USER = 1000
const AS_USER = ["setpriv", `--reuid=${USER}`, `--regid=${USER}`, "--clear-groups", process.execPath]

interface Modes {
  readonly socketDir: number
  readonly socket: number
  readonly lockDir: number
  readonly lockFile: number
}

const CASES: ReadonlyArray<readonly [name: string, extra: Record<string, string>, modes: Modes]> = [
  // No peer group: the private tree (spec v0.3 §21 "private development mode").
  ["private (no peer group)", {}, { socketDir: 0o700, socket: 0o600, lockDir: 0o700, lockFile: 0o600 }],
  // §6/§21: the user-scoped deployment with the explicit peer GID = the user's own primary group.
  [
    "shared with the user's own primary group",
    { SERVERFS_AGENT_PEER_GID: String(USER) },
    { socketDir: 0o750, socket: 0o660, lockDir: 0o750, lockFile: 0o640 }
  ]
]

let base: string | undefined
let bridge: BridgeProcess | undefined
let mcp: McpProcess | undefined

afterEach(async () => {
  await mcp?.close()
  await bridge?.kill("SIGTERM")
  mcp = undefined
  bridge = undefined
  if (base !== undefined) fs.rmSync(base, { recursive: true, force: true })
  base = undefined
})

/** A directory of the user, mode `mode`. */
const userDir = (dir: string, mode: number): string => {
  fs.mkdirSync(dir)
  fs.chownSync(dir, USER, USER)
  fs.chmodSync(dir, mode)
  return dir
}

const modeOf = (stat: fs.Stats): number => stat.mode & 0o777

describe.skipIf(skipWithoutRoot("setpriv runs both programs as uid 1000"))(
  "user-scoped defaults, end to end as uid 1000 (skipped unless root)",
  () => {
    // The programs where uid 1000 can run them (a checkout under a private directory is mirrored).
    let checkout: ReadableCheckout | undefined
    beforeAll(() => {
      checkout = readableCheckout(USER)
    })
    afterAll(() => checkout?.remove())

    it.each(CASES)(
      "%s: no path variable set, a task delegated and a file written",
      async (_name, extra, modes) => {
        // Short names: the socket path must fit sun_path (107 bytes) below the home.
        base = fs.mkdtempSync("/tmp/sfu-")
        fs.chmodSync(base, 0o755)
        const home = userDir(path.join(base, "h"), 0o700)
        const workdir = userDir(path.join(base, "wd"), 0o755)
        // Only WORKDIR_* and Agent variables, plus the login environment's HOME: no path variable,
        // no XDG variable (startBridgeProcess and startMcp pass nothing else but PATH).
        const env: Record<string, string> = {
          HOME: home,
          WORKDIR_01_ALIAS: "main",
          WORKDIR_01_PATH: workdir,
          WORKDIR_01_READ_ONLY: "false",
          WORKDIR_01_AGENT_MODE: "workspace-write",
          WORKDIR_01_AGENT_RUNTIMES: "fake",
          SERVERFS_AGENT_BRIDGE_ENABLED: "true",
          SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "true",
          ...extra
        }
        for (const name of Object.keys(env)) expect(name).not.toMatch(/_(SOCKET|DIR)$|^XDG_/)

        bridge = await startBridgeProcess(env, AS_USER, checkout?.bridgeMain)
        mcp = await startMcp(env, AS_USER, checkout?.mcpMain)
        await mcp.client.listTools()

        const submitted = await ok(mcp.client, "submit_agent_task", {
          runtime: "fake",
          workdir: "main",
          prompt: "write:delegated.txt=from the agent\ncomplete:done"
        })
        const done = await waitForStatus(
          mcp.client,
          submitted.task_id as string,
          ["succeeded", "failed"],
          60_000
        )
        expect(done.status).toBe("succeeded")
        // serverfs-mcp's own mutation takes the lease in the lock directory the bridge prepared.
        await ok(mcp.client, "create_text_file", { workdir: "main", path: "by-mcp.txt", content: "hi" })
        for (const name of ["delegated.txt", "by-mcp.txt"]) {
          expect(fs.statSync(path.join(workdir, name)).uid).toBe(USER)
        }

        const runtime = path.join(home, ".local/share/serverfs-agent-bridge/runtime")
        const socketDir = fs.lstatSync(path.join(runtime, "socket"))
        const socket = fs.lstatSync(path.join(runtime, "socket/bridge.sock"))
        const lockDir = fs.lstatSync(path.join(runtime, "locks"))
        const lockFile = fs.lstatSync(path.join(runtime, "locks/01.lock"))
        const stateDir = fs.lstatSync(path.join(home, ".local/state/serverfs-agent-bridge"))
        expect(socket.isSocket()).toBe(true)
        expect(
          fs.lstatSync(path.join(home, ".local/state/serverfs-agent-bridge/state.sqlite3")).isFile()
        ).toBe(true)
        for (const stat of [socketDir, socket, lockDir, lockFile, stateDir]) {
          expect(stat.uid).toBe(USER)
          expect(stat.gid).toBe(USER)
        }
        expect({
          socketDir: modeOf(socketDir),
          socket: modeOf(socket),
          lockDir: modeOf(lockDir),
          lockFile: modeOf(lockFile)
        }).toEqual(modes)
        expect(modeOf(stateDir)).toBe(0o700)
        // Missing parents are created no looser than the directory they lead to, never group-writable.
        for (const parent of [
          ".local",
          ".local/share",
          ".local/share/serverfs-agent-bridge",
          ".local/state"
        ]) {
          const stat = fs.lstatSync(path.join(home, parent))
          expect(stat.uid).toBe(USER)
          expect(modeOf(stat) & 0o027).toBe(0)
        }
        // No host path of the user's runtime reached the client.
        const seen = JSON.stringify(await mcp.client.callTool({ name: "list_agent_runtimes", arguments: {} }))
        expect(seen).not.toContain(home)
      }
    )
  }
)

describe("user-scoped defaults fail closed", () => {
  it.each([
    ["serverfs-bridge", bridgeMain],
    ["serverfs-mcp", mcpMain]
  ])(
    "%s with the bridge enabled, no HOME, no XDG and no path variable → exit 2 naming what to set",
    (_name, main) => {
      base = fs.mkdtempSync("/tmp/sfu-")
      const result = spawnSync(process.execPath, [main], {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          WORKDIR_01_ALIAS: "main",
          WORKDIR_01_PATH: base,
          SERVERFS_AGENT_BRIDGE_ENABLED: "true"
        },
        input: "",
        encoding: "utf8",
        timeout: 60_000
      })
      expect(result.status).toBe(2)
      expect(result.stderr.split("\n")[0]).toBe(
        "ServerFS: configuration error: SERVERFS_AGENT_LOCK_DIR: has no default: neither XDG_DATA_HOME nor HOME is set to an absolute path; set SERVERFS_AGENT_LOCK_DIR (or XDG_DATA_HOME, or HOME)"
      )
      expect(result.stderr).not.toContain(base)
    }
  )
})
