import { type ChildProcess, spawn } from "node:child_process"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, type Scope } from "effect"
import { eventuallyAsync, NotReached } from "./Eventually.js"
import { jsonObjectLines } from "./JsonLines.js"
import { type McpProcess, startMcp } from "./McpProcess.js"
import { bridgeMain } from "./RepoPaths.js"
import { makeTempTree, type TempTree } from "./TempTree.js"
import { textOf } from "./ToolText.js"

/**
 * The whole agent plane for end-to-end tests, as production runs it: a real `serverfs-bridge`
 * process on a Unix socket, and a real `serverfs-mcp` process over stdio with an MCP SDK client,
 * both reading one environment and sharing one temp tree (workdir, lock directory, state
 * directory, socket directory). Every process started here is killed by `stop()`, and — should
 * the test worker itself go away first — by an exit hook.
 */

/** What a tool call gives back, as the tests read it. */
export interface ToolCallResult {
  readonly content?: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

export interface BridgeProcess {
  /** The pid of the current incarnation. */
  readonly pid: number
  readonly running: boolean
  /** stderr lines of every incarnation, in order. */
  readonly stderrLines: () => ReadonlyArray<string>
  /** stderr lines that are JSON objects (the bridge's log), every incarnation. */
  readonly audit: () => ReadonlyArray<Record<string, unknown>>
  /** Send `signal` (SIGTERM by default) and wait until the process has exited. */
  readonly kill: (signal?: NodeJS.Signals) => Promise<void>
  /** Stop the current incarnation if it runs (SIGTERM), then start a new one with the same env. */
  readonly restart: () => Promise<void>
}

export interface AgentStackOptions {
  /** Directory-name prefix of the temp tree. */
  readonly prefix?: string
  /** Runs before anything starts: create extra workdirs, files, symlinks. */
  readonly setup?: (tree: TempTree) => void
  /** Variables added to (or overriding) the defaults, for both processes. */
  readonly env?: (tree: TempTree) => Record<string, string>
  /** Start the bridge (default true). With false, `bridge.restart()` starts it later. */
  readonly startBridge?: boolean
}

export interface AgentStack {
  /**
   * The MCP SDK client of the stack's MCP server, after tools/list (so every structured result is
   * checked against the advertised outputSchema). Every result it receives is recorded.
   */
  readonly client: Client
  readonly mcp: McpProcess
  readonly bridge: BridgeProcess
  readonly tree: TempTree
  /** The environment both processes were started with (PATH aside). */
  readonly env: Readonly<Record<string, string>>
  /** Another MCP server (own client) on the same tree and bridge; `env` overrides the stack's. */
  readonly startMcp: (env?: Record<string, string>) => Promise<McpProcess>
  /** The text and structured content of every tool result any of the stack's clients received. */
  readonly received: () => ReadonlyArray<string>
  /** stderr lines of every MCP server of the stack. */
  readonly mcpStderrLines: () => ReadonlyArray<string>
  readonly stop: () => Promise<void>
}

const BRIDGE_START_TIMEOUT_MS = 60_000
const EXIT_GRACE_MS = 10_000

// ---- process hygiene -------------------------------------------------------------------------
const livePids = new Set<number>()
let exitHookInstalled = false
const installExitHook = (): void => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const pid of livePids) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  })
}

const parseJsonLines = jsonObjectLines

/** Wait until `child` has exited (at once if it already has). */
const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

/**
 * The bridge as a supervised child: started with `env` (plus PATH), considered up once it logs
 * `bridge_started`. A start that exits or stays silent fails with its stderr. `command`, like
 * startMcp's, runs it through a wrapper ending with the node binary (e.g. setpriv … node).
 */
export const startBridgeProcess = async (
  env: Readonly<Record<string, string>>,
  command: ReadonlyArray<string> = [],
  main: string = bridgeMain
): Promise<BridgeProcess> => {
  installExitHook()
  const lines: string[] = []
  let child: ChildProcess | undefined

  const launch = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn(command[0] ?? process.execPath, [...command.slice(1), main], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
        stdio: ["ignore", "ignore", "pipe"]
      })
      child = proc
      if (proc.pid !== undefined) livePids.add(proc.pid)
      const firstLine = lines.length
      let partial = ""
      let started = false
      const timer = setTimeout(() => {
        if (started) return
        proc.kill("SIGKILL")
        reject(new Error(`the bridge did not start in time:\n${lines.slice(firstLine).join("\n")}`))
      }, BRIDGE_START_TIMEOUT_MS)
      proc.stderr?.on("data", (chunk: Buffer) => {
        partial += chunk.toString("utf8")
        const parts = partial.split("\n")
        partial = parts.pop() ?? ""
        for (const line of parts) {
          if (line === "") continue
          lines.push(line)
          if (!started && line.includes('"event":"bridge_started"')) {
            started = true
            clearTimeout(timer)
            resolve()
          }
        }
      })
      proc.once("exit", (code, signal) => {
        if (proc.pid !== undefined) livePids.delete(proc.pid)
        if (partial !== "") lines.push(partial)
        partial = ""
        if (!started) {
          clearTimeout(timer)
          reject(
            new Error(
              `the bridge exited before it started (${code ?? signal}):\n${lines.slice(firstLine).join("\n")}`
            )
          )
        }
      })
    })

  const isRunning = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null

  const kill = async (signal: NodeJS.Signals = "SIGTERM"): Promise<void> => {
    const proc = child
    if (proc === undefined || !isRunning()) return
    proc.kill(signal)
    const timer = setTimeout(() => proc.kill("SIGKILL"), EXIT_GRACE_MS)
    await exited(proc)
    clearTimeout(timer)
  }

  await launch()
  return {
    get pid() {
      return child?.pid ?? -1
    },
    get running() {
      return isRunning()
    },
    stderrLines: () => [...lines],
    audit: () => parseJsonLines(lines),
    kill,
    restart: async () => {
      await kill("SIGTERM")
      await launch()
    }
  }
}

/** Record the JSON of every tool result `client` receives into `sink`. */
const recordResults = (client: Client, sink: string[]): void => {
  const original = client.callTool.bind(client)
  const recording: typeof client.callTool = async (...args) => {
    const result = await original(...args)
    sink.push(JSON.stringify(result))
    return result
  }
  client.callTool = recording
}

/** The default environment: one read-write workdir `main` that delegates to the scripted runtime. */
export const agentStackEnv = (tree: TempTree): Record<string, string> => ({
  WORKDIR_01_ALIAS: "main",
  WORKDIR_01_PATH: tree.root,
  WORKDIR_01_READ_ONLY: "false",
  WORKDIR_01_AGENT_MODE: "workspace-write",
  WORKDIR_01_AGENT_RUNTIMES: "fake",
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_BRIDGE_SOCKET: `${tree.base}/run/bridge.sock`,
  SERVERFS_AGENT_LOCK_DIR: `${tree.base}/locks`,
  SERVERFS_AGENT_BRIDGE_STATE_DIR: `${tree.base}/state`,
  SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "true"
})

export const startAgentStack = async (options: AgentStackOptions = {}): Promise<AgentStack> => {
  installExitHook()
  const tree = makeTempTree(options.prefix ?? "serverfs-agents-")
  const received: string[] = []
  const mcps: McpProcess[] = []
  let bridge: BridgeProcess | undefined
  let stopped = false

  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await Promise.allSettled(mcps.map((m) => m.close()))
    for (const m of mcps) livePids.delete(m.pid)
    await bridge?.kill("SIGTERM")
    tree.remove()
  }

  try {
    options.setup?.(tree)
    const env: Record<string, string> = { ...agentStackEnv(tree), ...options.env?.(tree) }

    const launchMcp = async (overrides: Record<string, string> = {}): Promise<McpProcess> => {
      const mcp = await startMcp({ ...env, ...overrides })
      livePids.add(mcp.pid)
      mcps.push(mcp)
      recordResults(mcp.client, received)
      // As a chat client does: list the tools first, which also makes the SDK client check every
      // structured result against the tool's advertised outputSchema.
      await mcp.client.listTools()
      return mcp
    }

    if (options.startBridge === false) {
      // A bridge that is not running yet: `restart()` starts it with the stack's env.
      bridge = deferredBridge(env)
    } else {
      bridge = await startBridgeProcess(env)
    }
    const mcp = await launchMcp()
    const theBridge = bridge
    return {
      client: mcp.client,
      mcp,
      bridge: theBridge,
      tree,
      env,
      startMcp: launchMcp,
      received: () => [...received],
      mcpStderrLines: () => mcps.flatMap((m) => m.stderrLines()),
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** A BridgeProcess handle whose first `restart()` starts the bridge. */
const deferredBridge = (env: Readonly<Record<string, string>>): BridgeProcess => {
  let inner: BridgeProcess | undefined
  return {
    get pid() {
      return inner?.pid ?? -1
    },
    get running() {
      return inner?.running ?? false
    },
    stderrLines: () => inner?.stderrLines() ?? [],
    audit: () => inner?.audit() ?? [],
    kill: (signal) => inner?.kill(signal) ?? Promise.resolve(),
    restart: async () => {
      if (inner === undefined) inner = await startBridgeProcess(env)
      else await inner.restart()
    }
  }
}

// ---- waiting on tasks ----------------------------------------------------------------------------

const callOk = async (
  client: Client,
  name: string,
  args: Record<string, unknown>
): Promise<Record<string, unknown>> => {
  const result = (await client.callTool({ name, arguments: args })) as ToolCallResult
  if (result.isError === true || result.structuredContent === undefined) {
    throw new Error(`${name} failed: ${textOf(result)}`)
  }
  return result.structuredContent
}

/**
 * Ask get_agent_task (through `eventually`) until the task's status is one of `statuses`; returns that task view.
 * Fails with the last status seen when `timeoutMs` passes first.
 */
export const waitForStatus = async (
  client: Client,
  taskId: string,
  statuses: ReadonlyArray<string>,
  timeoutMs = 30_000
): Promise<Record<string, unknown>> => {
  let last = "(none)"
  return eventuallyAsync(
    `task ${taskId} reaching ${statuses.join("|")}`,
    async () => {
      const task = await callOk(client, "get_agent_task", { task_id: taskId })
      last = String(task.status)
      return statuses.includes(last) ? task : undefined
    },
    timeoutMs
  ).catch((error: unknown) => {
    throw error instanceof NotReached
      ? new Error(`task ${taskId} did not reach ${statuses.join("|")} in ${timeoutMs} ms (last: ${last})`)
      : error
  })
}

export interface AgentEvent {
  readonly event_id: number
  readonly task_id: string
  readonly correlation_id: string | null
  readonly event_type: string
  readonly payload: Record<string, unknown>
  readonly created_at: string
  readonly schema_version: number
}

/**
 * Every event of a task so far, following next_after_event_id page by page until a page comes
 * back empty.
 */
export const readAllEvents = async (
  client: Client,
  taskId: string,
  options: { readonly after?: number; readonly limit?: number } = {}
): Promise<ReadonlyArray<AgentEvent>> => {
  const events: AgentEvent[] = []
  let cursor = options.after ?? 0
  for (;;) {
    const page = await callOk(client, "read_agent_task_events", {
      task_id: taskId,
      after_event_id: cursor,
      limit: options.limit ?? 500
    })
    const batch = page.events as ReadonlyArray<AgentEvent>
    if (batch.length === 0) return events
    events.push(...batch)
    cursor = page.next_after_event_id as number
  }
}

// ---- scoped acquisition ------------------------------------------------------------------------

/**
 * The whole stack for as long as the enclosing Scope lasts (`it.scoped`, or `layer(...)` for a
 * describe block): the scope's finalizer stops both processes and removes the tree, whatever way
 * the test ends — no afterEach, no finally.
 */
export const scopedAgentStack = (
  options: AgentStackOptions = {}
): Effect.Effect<AgentStack, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startAgentStack(options)),
    (stack) => Effect.promise(stack.stop)
  )

/** A bridge process for as long as the enclosing Scope lasts; SIGTERM (then SIGKILL) on release. */
export const scopedBridgeProcess = (
  env: Readonly<Record<string, string>>
): Effect.Effect<BridgeProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startBridgeProcess(env)),
    (bridge) => Effect.promise(() => bridge.kill("SIGTERM"))
  )
