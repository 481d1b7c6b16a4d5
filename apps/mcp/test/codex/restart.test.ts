/**
 * A bridge restart (SIGKILL) while a Codex task waits for an approval, through the real
 * `serverfs-mcp`, the real bridge and the real managed Codex daemon (issue 15 item 7; spec v0.7
 * §2.3, bridge-internals §10): where the daemon still runs the turn, the restarted bridge
 * re-attaches it — the same ServerFS request, answered once, the command runs once, the lease and
 * the guard follow the task. Where that cannot be proven (the daemon restarted too, the stdio
 * transport, a deadline passed while the bridge was down), the task is interrupted and nothing
 * runs. The command appends a line to `count.txt`: a re-run would show as a second line.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type AgentStack,
  bridgeCall,
  type CodexHome,
  cleanupCodexDaemon,
  type FakeResponsesServer,
  killCodexDaemon,
  makeCodexHome,
  readAllEvents,
  startAgentStack,
  startCodexDaemon,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  call,
  codexStackEnv,
  eventually,
  expectStatus,
  fails,
  ok,
  pendingOf,
  sleep,
  submitCodex
} from "./support.js"

/** A test with bridge restarts and real Codex turns under load (the deadline case waits ~40 s). */
const RESTART_BOUND = 240_000

/** What diagnostics.task answers, as far as these tests read it. */
interface Trace {
  readonly disposition: string
  readonly completeness?: string
  readonly operations: ReadonlyArray<{ readonly kind: string; readonly outcome?: string }>
  readonly seal: unknown
}

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack

/** The stack's environment, changed for the bridge's next start (transport, task timeout). */
const nextStart = (changes: Record<string, string>) =>
  Object.assign(stack.env as Record<string, string>, changes)

beforeAll(async () => {
  server = await startFakeResponsesServer()
  home = makeCodexHome({ baseUrl: server.baseUrl })
  await startCodexDaemon(home.path)
  stack = await startAgentStack({
    prefix: "sfx-codex-restart-",
    env: () => codexStackEnv(home, "daemon")
  })
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  if (home !== undefined) {
    await cleanupCodexDaemon(home.path)
    home.remove()
  }
  await server?.close()
}, 60_000)

beforeEach(() => {
  server.reset()
})

const countFile = () => path.join(stack.tree.root, "count.txt")
const runs = () => (fs.existsSync(countFile()) ? fs.readFileSync(countFile(), "utf8") : "")
const mutate = (name: string) =>
  call(stack.client, "create_text_file", { workdir: "main", path: name, content: "from MCP\n" })
const refusal = async (name: string) => (await mutate(name)).content?.[0]?.text?.split(":")[0]

/** A task whose one command (appending to count.txt) waits for approval. */
const waitingTask = async (prompt: string) => {
  server.script(
    { type: "shell", command: `echo ran >> ${countFile()}`, escalate: "Count the run" },
    { type: "message", text: "counted" }
  )
  const taskId = await submitCodex(stack.client, prompt)
  return { taskId, pending: await pendingOf(stack.client, taskId) }
}

describe("Codex across a bridge restart (managed daemon)", () => {
  it(
    "list_agent_runtimes says in_flight_recovery native for the daemon transport",
    async () => {
      const runtimes = await ok(stack.client, "list_agent_runtimes")
      expect(runtimes.runtimes).toMatchObject([{ name: "codex", in_flight_recovery: "native" }])
    },
    RESTART_BOUND
  )

  it(
    "SIGKILL during an approval: the turn is re-attached, the same request answered, the command runs once",
    async () => {
      const { taskId, pending } = await waitingTask("count once")
      expect(await refusal("during.txt")).toBe("WORKDIR_BUSY")

      await stack.bridge.kill("SIGKILL")
      // The bridge is gone; its guard still refuses mutations.
      expect(await refusal("down.txt")).toBe("WORKDIR_RECOVERY_REQUIRED")
      await stack.bridge.restart()

      const back = await ok(stack.client, "get_agent_task", { task_id: taskId })
      expect(back.status).toBe("waiting_for_approval")
      expect((back.pending_request as { request_id: string }).request_id).toBe(pending.request_id)
      // The restarted bridge holds the lease for the task again.
      expect(await refusal("after-restart.txt")).toBe("WORKDIR_BUSY")
      expect(runs()).toBe("")

      await ok(stack.client, "respond_agent_approval", {
        task_id: taskId,
        request_id: pending.request_id,
        decision: "approve_once"
      })
      const task = await expectStatus(stack.client, taskId, "succeeded")
      expect(task.final_response).toBe("counted")
      expect(runs()).toBe("ran\n")

      const events = await readAllEvents(stack.client, taskId)
      const types = events.map((e) => e.event_type)
      expect(types).toEqual(
        expect.arrayContaining([
          "approval.requested",
          "runtime.reconcile_started",
          "runtime.reconcile_finished",
          "provider.reattached",
          "task.reconciled",
          "approval.resolved",
          "task.completed"
        ])
      )
      expect(types.filter((t) => t === "approval.requested")).toHaveLength(1)
      expect(events.find((e) => e.event_type === "provider.reattached")?.payload).toEqual({
        after: "bridge_restart"
      })
      expect(events.find((e) => e.event_type === "runtime.reconcile_finished")?.payload).toMatchObject({
        status: "REATTACHED",
        provider_active: true
      })
      expect(types.indexOf("task.reconciled")).toBeLessThan(types.indexOf("approval.resolved"))
      await eventually("the lease released", async () =>
        (await mutate("after-end.txt")).isError === true ? undefined : true
      )
      // Spec v0.22: this process observed the task from its reconciliation on — a `restarted`
      // trace with the re-attach as its recovery, sealed once by the success.
      const trace = await eventually("the re-attached task's seal", async () => {
        const response = await bridgeCall(stack.env.SERVERFS_AGENT_BRIDGE_SOCKET ?? "", "diagnostics.task", {
          task_id: taskId
        })
        const result = response.result as Trace | undefined
        return result?.disposition === "available" && result.seal !== null ? result : undefined
      })
      expect(trace.completeness).toBe("restarted")
      expect(trace.operations.filter((o) => o.kind === "agent.recovery").map((o) => o.outcome)).toEqual([
        "reattached"
      ])
      expect(trace.seal).toMatchObject({ outcome: "succeeded" })
    },
    RESTART_BOUND
  )

  it(
    "the daemon restarted too: interrupted (BRIDGE_RESTARTED), the request stale, nothing runs",
    async () => {
      const before = runs()
      const { taskId, pending } = await waitingTask("lost with the daemon")
      await stack.bridge.kill("SIGKILL")
      await killCodexDaemon(home.path)
      await startCodexDaemon(home.path)
      await stack.bridge.restart()
      const task = await expectStatus(stack.client, taskId, "interrupted")
      expect(task.error_code).toBe("BRIDGE_RESTARTED")
      const late = await fails(stack.client, "respond_agent_approval", {
        task_id: taskId,
        request_id: pending.request_id,
        decision: "approve_once"
      })
      expect(late.code).toBe("REQUEST_STALE")
      const events = await readAllEvents(stack.client, taskId)
      expect(events.map((e) => e.event_type)).not.toContain("provider.reattached")
      await eventually("the workdir usable again", async () =>
        (await mutate("after-daemon.txt")).isError === true ? undefined : true
      )
      expect(runs()).toBe(before)
    },
    RESTART_BOUND
  )

  it(
    "the stdio transport: interrupted, nothing runs",
    async () => {
      nextStart({ SERVERFS_CODEX_TRANSPORT: "stdio" })
      await stack.bridge.restart()
      const runtimes = await ok(stack.client, "list_agent_runtimes")
      expect(runtimes.runtimes).toMatchObject([{ name: "codex", in_flight_recovery: "session-resume" }])
      const before = runs()
      const { taskId } = await waitingTask("stdio child")
      await stack.bridge.kill("SIGKILL")
      await stack.bridge.restart()
      const task = await expectStatus(stack.client, taskId, "interrupted")
      expect(task.error_code).toBe("BRIDGE_RESTARTED")
      expect(runs()).toBe(before)
      nextStart({ SERVERFS_CODEX_TRANSPORT: "daemon" })
    },
    RESTART_BOUND
  )

  it(
    "the deadline passed while the bridge was down: interrupted (AGENT_TASK_TIMED_OUT), nothing runs",
    async () => {
      nextStart({ SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "40" })
      await stack.bridge.restart()
      await eventually("the workdir free", async () =>
        (await mutate("before-deadline.txt")).isError === true ? undefined : true
      )
      const before = runs()
      const started = Date.now()
      const { taskId } = await waitingTask("too slow")
      await stack.bridge.kill("SIGKILL")
      await sleep(Math.max(0, started + 42_000 - Date.now()))
      await stack.bridge.restart()
      const task = await expectStatus(stack.client, taskId, "interrupted")
      expect(task.error_code).toBe("AGENT_TASK_TIMED_OUT")
      expect(runs()).toBe(before)
    },
    RESTART_BOUND
  )
})
