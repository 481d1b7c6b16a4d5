import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { BridgeMethod, MethodParams, MethodResult } from "@serverfs/domain"
import { makeBridgeClient } from "@serverfs/rpc"
import { Effect } from "effect"
import { McpSession, structured } from "./McpDriver.js"
import { measure } from "./Measure.js"
import { EchoServer, RawRelay, RawTaskStore, requestLine } from "./RawBaselines.js"
import type { Row } from "./Report.js"
import { type Memory, memoryOf } from "./Rss.js"
import { bridgeEntry, profileArgs, serverfsAgentLaunch } from "./Servers.js"
import { single, summarize } from "./Stats.js"

/**
 * The Agent Bridge: the real `serverfs-bridge` process with the scripted runtime `fake`, driven
 * over its Unix socket by the same RPC client serverfs-mcp uses (one connection per call), and
 * through serverfs-mcp's submit_agent_task over stdio. Measured:
 *
 * - the task.submit round trip, beside a raw SQLite INSERT + raw Unix-socket round trip, and
 *   the MCP submit also beside that round trip relayed through a third raw process;
 * - events persisted per second, from the bridge's own created_at timestamps;
 * - the bridge's idle RSS after start-up and after the run.
 */
export interface BridgePlan {
  readonly warmup: number
  readonly iterations: number
  /** Tasks run in parallel for the event rate. */
  readonly eventTasks: number
  /** `events:N` of each of those tasks. */
  readonly eventsPerTask: number
}

export interface BridgeResults {
  readonly rows: Row[]
  readonly notes: ReadonlyArray<string>
}

const ALIAS = "bench"
const SUBMIT_PROMPT = "complete:x"
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"])
const START_TIMEOUT_MS = 60_000
const TASK_TIMEOUT_MS = 600_000
/** The sleep before the events of side-by-side tasks, so that every submission is in first. */
const SPREAD_MS = 2_000
/** How long the bridge is left alone before its RSS is read. */
const IDLE_MS = 3_000
/**
 * After a burst, V8's memory reducer gives heap pages back only once allocation has been low for
 * a while (several seconds): the RSS is read again after this much more idle time.
 */
const SETTLE_MS = 20_000

type Rpc = <M extends BridgeMethod>(method: M, params: MethodParams<M>) => Promise<MethodResult<M>>

/** The environment both processes read: one review workdir allowing `fake`, everything in `base`. */
const environment = (base: string): Record<string, string> => ({
  HOME: base,
  WORKDIR_01_ALIAS: ALIAS,
  WORKDIR_01_PATH: path.join(base, "workdir"),
  WORKDIR_01_READ_ONLY: "false",
  // review: a task takes no writer lease, so back-to-back and parallel submits never collide.
  WORKDIR_01_AGENT_MODE: "review",
  WORKDIR_01_AGENT_RUNTIMES: "fake",
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_BRIDGE_SOCKET: path.join(base, "run", "bridge.sock"),
  SERVERFS_AGENT_LOCK_DIR: path.join(base, "locks"),
  SERVERFS_AGENT_BRIDGE_STATE_DIR: path.join(base, "state"),
  SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "true",
  SERVERFS_AGENT_MAX_ACTIVE_TASKS: "256",
  // The disk budget must give each of the 256 task slots its share (at least 19005440 bytes);
  // it is a cap, not an allocation: the run writes a few MiB.
  SERVERFS_AGENT_STATE_MAX_BYTES: String(8 * 1024 ** 3),
  SERVERFS_LOG_LEVEL: "ERROR"
})

/** The bridge as a child process; up once runtime.list answers over its socket. */
class BridgeProcess {
  private stderrTail = ""

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-4096)
    })
  }

  static async start(env: Readonly<Record<string, string>>, rpc: Rpc): Promise<BridgeProcess> {
    const child = spawn(process.execPath, [...profileArgs(), bridgeEntry()], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    const bridge = new BridgeProcess(child)
    const deadline = performance.now() + START_TIMEOUT_MS
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`the bridge exited with ${child.exitCode}: ${bridge.stderr}`)
      try {
        await rpc("runtime.list", {})
        return bridge
      } catch {
        if (performance.now() > deadline) {
          child.kill("SIGKILL")
          throw new Error(`the bridge did not answer in time: ${bridge.stderr}`)
        }
        await sleep(50)
      }
    }
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error("the bridge has no pid")
    return this.child.pid
  }

  get stderr(): string {
    return this.stderrTail
  }

  memory(): Memory {
    return memoryOf(this.pid)
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()))
    this.child.kill("SIGTERM")
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000)
    await exited
    clearTimeout(timer)
  }
}

/** VmRSS of a node process that does nothing, as a floor for the bridge's idle RSS. */
const idleNodeRss = async (): Promise<number> => {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  await sleep(1_500)
  const rss = memoryOf(child.pid!).rssMiB
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill("SIGTERM")
  await exited
  return rss
}

const millis = (iso: string | null): number => {
  const ms = iso === null ? Number.NaN : Date.parse(iso)
  if (!Number.isFinite(ms)) throw new Error(`not a timestamp: ${iso}`)
  return ms
}

export const runBridge = async (
  plan: BridgePlan,
  progress: (message: string) => void
): Promise<BridgeResults> => {
  const parent = path.join(os.tmpdir(), "serverfs-bench")
  fs.mkdirSync(parent, { recursive: true })
  const base = fs.mkdtempSync(path.join(parent, "bridge-"))
  fs.mkdirSync(path.join(base, "workdir"))
  const env = environment(base)
  // The timed calls use serverfs-mcp's default timeout (30 s); the untimed ones (polling, reading
  // events) a long one, because the bridge can keep a request waiting while a task appends events.
  const client = makeBridgeClient({ socketPath: env.SERVERFS_AGENT_BRIDGE_SOCKET!, timeoutSeconds: 30 })
  const patient = makeBridgeClient({ socketPath: env.SERVERFS_AGENT_BRIDGE_SOCKET!, timeoutSeconds: 600 })
  const rpc: Rpc = (method, params) => Effect.runPromise(client.call(method, params))
  const slowRpc: Rpc = (method, params) => Effect.runPromise(patient.call(method, params))

  const submitParams: MethodParams<"task.submit"> = {
    runtime: "fake",
    workdir: ALIAS,
    path: "",
    profile: "review",
    prompt: SUBMIT_PROMPT
  }

  /** Poll task.get until the task is terminal (untimed: between samples). */
  const finished = async (taskId: string, pollMs: number): Promise<MethodResult<"task.get">> => {
    const deadline = performance.now() + TASK_TIMEOUT_MS
    for (;;) {
      const view = await slowRpc("task.get", { task_id: taskId })
      if (TERMINAL.has(view.status)) {
        if (view.status !== "succeeded") {
          throw new Error(`task ${taskId} ended ${view.status}: ${view.error_code} ${view.error_message}`)
        }
        return view
      }
      if (performance.now() > deadline) throw new Error(`task ${taskId} did not finish in time`)
      await sleep(pollMs)
    }
  }

  /** Every event of a task, page by page. */
  const eventsOf = async (taskId: string) => {
    const all: Array<{ readonly event_type: string; readonly created_at: string }> = []
    let after = 0
    for (;;) {
      const page = await slowRpc("task.events", { task_id: taskId, after_event_id: after, limit: 500 })
      all.push(...page.events)
      if (page.events.length < 500) return all
      after = page.next_after_event_id
    }
  }

  let bridge: BridgeProcess | undefined
  let mcp: McpSession | undefined
  let echo: EchoServer | undefined
  let relay: RawRelay | undefined
  let raw: RawTaskStore | undefined
  try {
    progress(`starting serverfs-bridge (state in ${base})`)
    const idleFloor = await idleNodeRss()
    const spawned = performance.now()
    bridge = await BridgeProcess.start(env, rpc)
    const startMs = performance.now() - spawned
    await sleep(IDLE_MS)
    const afterStart = bridge.memory()

    // Sanity: a scripted task runs to its final response, over RPC and over MCP.
    const first = await rpc("task.submit", { ...submitParams, prompt: "complete:sanity" })
    const firstView = await finished(first.task_id, 2)
    if (firstView.final_response !== "sanity") throw new Error("sanity check failed: final_response")
    mcp = await McpSession.start(serverfsAgentLaunch(env))
    const tools = await mcp.listToolNames()
    if (!tools.includes("submit_agent_task")) throw new Error("serverfs-mcp has no submit_agent_task")
    const viaMcp = structured(
      await mcp.callValidated("submit_agent_task", {
        runtime: "fake",
        workdir: ALIAS,
        profile: "review",
        prompt: "complete:mcp"
      })
    )
    const mcpView = await finished(String(viaMcp.task_id), 2)
    if (mcpView.final_response !== "mcp") throw new Error("sanity check failed: MCP final_response")

    // The raw floor, with the manifest of a real task in every row.
    raw = new RawTaskStore(path.join(base, "raw.sqlite3"), JSON.stringify(firstView.manifest))
    echo = await EchoServer.start(path.join(base, "echo.sock"))
    relay = RawRelay.start(echo)
    const line = requestLine()

    progress(`task.submit round trips (${plan.iterations} rounds; each task runs to its end, untimed)`)
    const rawBoth = "raw SQLite INSERT + raw UDS round trip"
    const rawInsert = "raw SQLite INSERT (WAL, synchronous NORMAL)"
    const rawUds = `raw UDS round trip, ${line.length} B line, new connection`
    const rawChain = "raw SQLite INSERT + the UDS round trip through a raw stdio relay process"
    const viaRpc = "RPC task.submit"
    const viaTool = "MCP submit_agent_task"
    const ping = "serverfs-mcp MCP ping"
    const submits = await measure(
      [
        {
          label: viaRpc,
          selfTimed: true,
          run: async () => {
            const started = performance.now()
            const { task_id } = await rpc("task.submit", submitParams)
            const elapsed = performance.now() - started
            await finished(task_id, 1)
            return elapsed
          }
        },
        {
          label: viaTool,
          selfTimed: true,
          run: async () => {
            const started = performance.now()
            const result = await mcp!.call("submit_agent_task", {
              runtime: "fake",
              workdir: ALIAS,
              profile: "review",
              prompt: SUBMIT_PROMPT
            })
            const elapsed = performance.now() - started
            await finished(String(structured(result).task_id), 1)
            return elapsed
          }
        },
        {
          label: rawBoth,
          run: async () => {
            raw!.insertTaskRow()
            await echo!.roundTrip(line)
          }
        },
        { label: rawInsert, run: async () => raw!.insertTaskRow() },
        { label: rawUds, run: () => echo!.roundTrip(line) },
        {
          label: rawChain,
          run: async () => {
            raw!.insertTaskRow()
            await relay!.roundTrip(line)
          }
        },
        { label: ping, run: () => mcp!.ping() }
      ],
      { warmup: plan.warmup, iterations: plan.iterations }
    )
    const submitTarget = { against: rawBoth, maxRatio: 3, stat: "p99" as const }
    const submitLimits = [{ stat: "p99" as const, atMost: 10 }]
    const rows: Row[] = [
      {
        operation: `task.submit over the UDS (RPC client, new connection per call), ${SUBMIT_PROMPT}`,
        unit: "ms",
        serverfs: submits.get(viaRpc)!,
        baselines: [rawBoth, rawInsert, rawUds].map((label) => ({ label, summary: submits.get(label)! })),
        target: submitTarget,
        limits: submitLimits
      },
      {
        operation: "submit_agent_task over stdio (serverfs-mcp → bridge)",
        unit: "ms",
        serverfs: submits.get(viaTool)!,
        baselines: [rawBoth, rawChain, viaRpc, ping].map((label) => ({
          label,
          summary: submits.get(label)!
        })),
        target: submitTarget,
        limits: submitLimits
      }
    ]

    // ---- events persisted per second --------------------------------------------------------
    /**
     * `tasks` tasks each appending `events:N` (scripted agent.message events). With more than
     * one task, each prompt starts with a sleep, so that every submission is in before any task
     * appends and the tasks really append side by side. The rate counts the scripted events of
     * all the tasks over the span from the first one's created_at to the last one's. Meanwhile a
     * task.get is timed every 100 ms: how long a request waits while events are appended.
     */
    const eventRate = async (tasks: number) => {
      const prompt = `${tasks > 1 ? `sleep:${SPREAD_MS}\n` : ""}events:${plan.eventsPerTask}\ncomplete:done`
      const ids = await Promise.all(
        Array.from({ length: tasks }, () =>
          slowRpc("task.submit", { ...submitParams, prompt }).then((r) => r.task_id)
        )
      )
      const allSubmitted = Date.now()
      const polls: number[] = []
      for (const id of ids) {
        for (;;) {
          const started = performance.now()
          const view = await slowRpc("task.get", { task_id: id })
          polls.push(performance.now() - started)
          if (TERMINAL.has(view.status)) break
          await sleep(100)
        }
        await finished(id, 1)
      }
      let count = 0
      let first = Number.POSITIVE_INFINITY
      let last = Number.NEGATIVE_INFINITY
      let perTaskSpans = 0
      for (const id of ids) {
        const scripted = (await eventsOf(id)).filter((e) => e.event_type === "agent.message")
        if (scripted.length !== plan.eventsPerTask)
          throw new Error(`task ${id} has ${scripted.length} scripted events`)
        count += scripted.length
        const own = scripted.map((e) => millis(e.created_at))
        const ownFirst = Math.min(...own)
        const ownLast = Math.max(...own)
        perTaskSpans += ownLast - ownFirst
        first = Math.min(first, ownFirst)
        last = Math.max(last, ownLast)
      }
      const seconds = (last - first) / 1000
      return {
        count,
        rate: count / seconds,
        seconds,
        // Σ per-task spans / overall span: about `tasks` when they appended side by side, 1 when one after another.
        overlap: perTaskSpans / (last - first),
        submittedBeforeFirstEvent: allSubmitted <= first,
        polls: summarize(polls)
      }
    }
    progress(`events: ${plan.eventTasks} tasks × events:${plan.eventsPerTask} side by side`)
    const parallel = await eventRate(plan.eventTasks)
    progress(`events: 1 task × events:${plan.eventsPerTask}`)
    const alone = await eventRate(1)
    const rawRate = raw.insertEvents(raw.insertTaskRow(), plan.eventTasks * plan.eventsPerTask)
    const rawEvents = "raw SQLite INSERT of event rows, one transaction each"
    rows.push(
      {
        operation: `events persisted/s: ${plan.eventTasks} tasks × events:${plan.eventsPerTask} side by side (first → last event created_at)`,
        unit: "events/s",
        serverfs: single(parallel.rate),
        baselines: [{ label: rawEvents, summary: single(rawRate) }],
        limits: [{ stat: "p50", atLeast: 20_000 }]
      },
      {
        operation: `  1 task × events:${plan.eventsPerTask} (first → last event created_at)`,
        unit: "events/s",
        serverfs: single(alone.rate),
        baselines: []
      },
      {
        operation: "  task.get round trip while those tasks append (one poll per 100 ms)",
        unit: "ms",
        serverfs: parallel.polls,
        baselines: []
      }
    )

    // ---- idle RSS ---------------------------------------------------------------------------
    await mcp.close()
    mcp = undefined
    await sleep(IDLE_MS)
    const afterRun = bridge.memory()
    await sleep(SETTLE_MS)
    const settled = bridge.memory()
    const nodeFloor = "idle node process (node -e setInterval)"
    rows.push(
      {
        operation: "bridge idle RSS (VmRSS) after start-up",
        unit: "MiB",
        serverfs: single(afterStart.rssMiB),
        baselines: [{ label: nodeFloor, summary: single(idleFloor) }],
        limits: [{ stat: "p50", atMost: 80 }]
      },
      {
        operation: `bridge idle RSS (VmRSS) ${IDLE_MS / 1000} s after the run`,
        unit: "MiB",
        serverfs: single(afterRun.rssMiB),
        baselines: [{ label: nodeFloor, summary: single(idleFloor) }],
        limits: [{ stat: "p50", atMost: 80 }]
      },
      {
        operation: `bridge idle RSS (VmRSS) ${(IDLE_MS + SETTLE_MS) / 1000} s after the run`,
        unit: "MiB",
        serverfs: single(settled.rssMiB),
        baselines: [{ label: nodeFloor, summary: single(idleFloor) }],
        limits: [{ stat: "p50", atMost: 80 }]
      },
      {
        operation: "bridge peak RSS (VmHWM) over the run",
        unit: "MiB",
        serverfs: single(afterRun.peakMiB),
        baselines: []
      },
      {
        operation: "bridge start: spawn → first runtime.list answer (one run)",
        unit: "ms",
        serverfs: single(startMs),
        baselines: []
      }
    )
    const notes = [
      `raw baseline: task rows carry a real ${Buffer.byteLength(JSON.stringify(firstView.manifest))}-byte manifest; the UDS line is ${line.length} bytes`,
      `events: ${parallel.count} scripted events in ${parallel.seconds.toFixed(2)} s from ${plan.eventTasks} tasks (Σ per-task spans / overall span ${parallel.overlap.toFixed(2)}; all submitted before the first event: ${parallel.submittedBeforeFirstEvent}); ${alone.count} in ${alone.seconds.toFixed(2)} s from one task`,
      `submits: ${plan.iterations} timed per contender after ${plan.warmup} warm-up; p95 task.submit ${submits.get(viaRpc)!.p95.toFixed(2)} ms, submit_agent_task ${submits.get(viaTool)!.p95.toFixed(2)} ms`
    ]
    return { rows, notes }
  } catch (error) {
    if (bridge !== undefined) process.stderr.write(`[bench] bridge stderr: ${bridge.stderr}\n`)
    if (mcp !== undefined) process.stderr.write(`[bench] serverfs-mcp stderr: ${mcp.stderr}\n`)
    throw error
  } finally {
    await mcp?.close()
    await relay?.stop()
    await echo?.stop()
    raw?.close()
    await bridge?.stop()
    fs.rmSync(base, { recursive: true, force: true })
  }
}
