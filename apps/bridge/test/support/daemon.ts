/**
 * Test support: a sandbox of real directories and a real `serverfs-bridge` process (the built
 * apps/bridge/dist/bundle/serverfs-bridge.js) talked to through the real RPC client over its Unix socket.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type BridgeClientService, makeBridgeClient } from "@serverfs/rpc"
import { eventually } from "@serverfs/testkit"
import { Data, Duration, Effect } from "effect"

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, "..", "..", "..", "..")
export const bridgeMain = path.join(repoRoot, "apps", "bridge", "dist", "bundle", "serverfs-bridge.js")

export const assertBuilt = (): void => {
  if (!fs.existsSync(bridgeMain)) {
    throw new Error("build the bridge first: npm run build")
  }
}

// ---- sandbox ----------------------------------------------------------------------------------

export interface WorkdirSpec {
  readonly slot: number
  readonly alias: string
  /** Directory name under the sandbox's `workdirs/` (or an absolute path). */
  readonly dir?: string
  readonly readOnly?: boolean
  readonly mode?: "disabled" | "review" | "workspace-write"
  readonly runtimes?: string
  readonly extra?: Readonly<Record<string, string>>
}

export interface Sandbox {
  readonly base: string
  readonly socketPath: string
  readonly lockDir: string
  readonly stateDir: string
  /** Host path of each configured workdir, by alias. */
  readonly workdirs: ReadonlyMap<string, string>
  readonly workdir: (alias: string) => string
  /** The environment of a bridge over this sandbox, plus `overrides`. */
  readonly env: (overrides?: Readonly<Record<string, string>>) => Record<string, string>
  readonly remove: () => void
}

const slotId = (slot: number) => String(slot).padStart(2, "0")

export const makeSandbox = (specs: ReadonlyArray<WorkdirSpec>): Sandbox => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "sfb-"))
  const workdirs = new Map<string, string>()
  const vars: Record<string, string> = {}
  for (const spec of specs) {
    const dir =
      spec.dir !== undefined && path.isAbsolute(spec.dir)
        ? spec.dir
        : path.join(base, "workdirs", spec.dir ?? spec.alias)
    fs.mkdirSync(dir, { recursive: true })
    workdirs.set(spec.alias, dir)
    const id = slotId(spec.slot)
    vars[`WORKDIR_${id}_ALIAS`] = spec.alias
    vars[`WORKDIR_${id}_PATH`] = dir
    vars[`WORKDIR_${id}_READ_ONLY`] = String(spec.readOnly ?? false)
    if (spec.mode !== undefined) vars[`WORKDIR_${id}_AGENT_MODE`] = spec.mode
    if (spec.runtimes !== undefined) vars[`WORKDIR_${id}_AGENT_RUNTIMES`] = spec.runtimes
    for (const [k, v] of Object.entries(spec.extra ?? {})) vars[`WORKDIR_${id}_${k}`] = v
  }
  const socketPath = path.join(base, "sock", "bridge.sock")
  const lockDir = path.join(base, "locks")
  const stateDir = path.join(base, "state")
  return {
    base,
    socketPath,
    lockDir,
    stateDir,
    workdirs,
    workdir: (alias) => {
      const dir = workdirs.get(alias)
      if (dir === undefined) throw new Error(`no workdir ${alias}`)
      return dir
    },
    env: (overrides = {}) => ({
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: base,
      ...vars,
      SERVERFS_AGENT_BRIDGE_ENABLED: "true",
      SERVERFS_AGENT_BRIDGE_SOCKET: socketPath,
      SERVERFS_AGENT_LOCK_DIR: lockDir,
      SERVERFS_AGENT_BRIDGE_STATE_DIR: stateDir,
      SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "true",
      ...overrides
    }),
    remove: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

// ---- the daemon -------------------------------------------------------------------------------

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Bridge {
  readonly proc: ChildProcess
  readonly client: BridgeClientService
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<Exited>
  /** SIGTERM (or another signal) and wait for the exit. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<Exited>
  /** SIGKILL and wait for the exit. */
  readonly kill: () => Promise<Exited>
}

const live = new Set<ChildProcess>()

/** SIGKILL every bridge a test left running (afterEach/afterAll). */
export const killAll = async (): Promise<void> => {
  const procs = [...live]
  live.clear()
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve()
          p.once("exit", () => resolve())
          p.kill("SIGKILL")
        })
    )
  )
}

export interface SpawnOptions {
  /** RLIMIT_NOFILE of the bridge (set with the shell's `ulimit -n` before exec). */
  readonly maxOpenFiles?: number
}

export const spawnBridge = (env: Record<string, string>, options: SpawnOptions = {}) => {
  assertBuilt()
  const proc =
    options.maxOpenFiles === undefined
      ? spawn(process.execPath, [bridgeMain], { env, stdio: ["ignore", "pipe", "pipe"] })
      : spawn(
          "/bin/sh",
          ["-c", `ulimit -n ${options.maxOpenFiles} && exec "$0" "$1"`, process.execPath, bridgeMain],
          { env, stdio: ["ignore", "pipe", "pipe"] }
        )
  live.add(proc)
  let stdout = ""
  let stderr = ""
  proc.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString("utf8")
  })
  proc.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString("utf8")
  })
  const exited = new Promise<Exited>((resolve) =>
    proc.once("exit", (code, signal) => {
      live.delete(proc)
      resolve({ code, signal })
    })
  )
  return { proc, exited, stdout: () => stdout, stderr: () => stderr }
}

/** Run the bridge until it exits by itself (a refused start), bounded. */
export const runToExit = async (
  env: Record<string, string>,
  timeoutMs = 30_000
): Promise<Exited & { readonly stdout: string; readonly stderr: string }> => {
  const child = spawnBridge(env)
  const timer = setTimeout(() => child.proc.kill("SIGKILL"), timeoutMs)
  const exit = await child.exited
  clearTimeout(timer)
  return { ...exit, stdout: child.stdout(), stderr: child.stderr() }
}

class BridgeDidNotStart extends Data.TaggedError("BridgeDidNotStart")<{ readonly message: string }> {}

/** Start the bridge and wait until it serves (its `bridge_started` line). */
export const startBridge = async (
  env: Record<string, string>,
  timeoutMs = 45_000,
  options: SpawnOptions = {}
): Promise<Bridge> => {
  const child = spawnBridge(env, options)
  const socketPath = env.SERVERFS_AGENT_BRIDGE_SOCKET
  if (socketPath === undefined) throw new Error("no socket path")
  const exitedEarly = () => child.proc.exitCode !== null || child.proc.signalCode !== null
  await Effect.runPromise(
    eventually(
      "the bridge to start",
      Effect.suspend(() =>
        child.stderr().includes('"event":"bridge_started"')
          ? Effect.succeed(true)
          : exitedEarly()
            ? Effect.fail(
                new BridgeDidNotStart({ message: `the bridge exited during startup: ${child.stderr()}` })
              )
            : Effect.void
      ),
      { timeout: Duration.millis(timeoutMs), interval: Duration.millis(10) }
    ).pipe(
      Effect.catchTag("NotReached", () =>
        Effect.zipRight(
          Effect.sync(() => child.proc.kill("SIGKILL")),
          Effect.fail(new BridgeDidNotStart({ message: `the bridge did not start: ${child.stderr()}` }))
        )
      )
    )
  )
  const signal = async (sig: NodeJS.Signals): Promise<Exited> => {
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill(sig)
    return child.exited
  }
  return {
    proc: child.proc,
    client: makeBridgeClient({ socketPath, timeoutSeconds: 30 }),
    stdout: child.stdout,
    stderr: child.stderr,
    exited: child.exited,
    stop: (sig = "SIGTERM") => signal(sig),
    kill: () => signal("SIGKILL")
  }
}

// RPC helpers and waits: rpcCalls.ts (re-exported here for the suites).
export * from "./rpcCalls.js"

export const stderrRecords = (stderr: string): Array<Record<string, unknown>> =>
  stderr
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

/**
 * A configuration error's stderr split into its two lines: the human line (with its newline) and
 * the `startup_failed` audit record (tool-contracts §7). Anything else fails the test.
 */
export const configurationFailure = (
  stderr: string
): { readonly human: string; readonly audit: Record<string, unknown> } => {
  const lines = stderr.split("\n").filter((l) => l !== "")
  if (lines.length !== 2 || !stderr.endsWith("\n"))
    throw new Error(`expected the human line and one audit line, got: ${stderr}`)
  return { human: `${lines[0]}\n`, audit: JSON.parse(lines[1] ?? "") as Record<string, unknown> }
}

/** The fields of the startup_failed line for a configuration error of `variable`, and no others. */
export const startupFailedFields = (variable: string) => ({
  level: "ERROR",
  event: "startup_failed",
  reason: "configuration error",
  variable
})

export const modeOf = (p: string): number => fs.lstatSync(p).mode & 0o7777

/** One raw NDJSON request line on a fresh connection; the parsed response line. */
export const rawCall = (socketPath: string, request: unknown): Promise<Record<string, unknown>> =>
  new Promise((resolve, reject) => {
    const socket = net.createConnection({ path: socketPath })
    let buffer = ""
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error("no response"))
    }, 30_000)
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`))
    socket.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const newline = buffer.indexOf("\n")
      if (newline === -1) return
      clearTimeout(timer)
      socket.destroy()
      resolve(JSON.parse(buffer.slice(0, newline)) as Record<string, unknown>)
    })
    socket.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })
