/**
 * Issue 15 item 3 with the real Codex (the managed daemon, the default transport) through
 * serverfs-mcp and the bridge: every terminal path the bridge decides for a workspace-write task
 * waiting on a command approval — the interaction's expiry, cancel_agent_task, a cancel_task
 * decision, bridge shutdown, the task's deadline — frees the workdir within one second of the
 * terminal state. The run is stopped the one way (the adapter's cancel, then the turn), never by
 * waiting out a bound; the command never runs and the model is not asked again.
 *
 * One stack for the file. The deadline needs a task timeout shorter than the interaction
 * timeout (an interaction never outlives the deadline), so it runs last, on the bridge the
 * shutdown test restarts with those two values changed.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  cleanupCodexDaemon,
  type FakeResponsesServer,
  makeCodexHome,
  processesMentioning,
  startAgentStack,
  startCodexDaemon,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { mutatesWithinBound } from "../releaseBound.js"
import { call, codexStackEnv, finished, ok, pendingOf, submitCodex } from "./support.js"

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack

beforeAll(async () => {
  server = await startFakeResponsesServer()
  home = makeCodexHome({ baseUrl: server.baseUrl })
  await startCodexDaemon(home.path)
  stack = await startAgentStack({
    prefix: "sfx-codex-release-",
    env: () => ({
      ...codexStackEnv(home, "daemon"),
      SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "6",
      SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "600"
    })
  })
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  if (home !== undefined) {
    await cleanupCodexDaemon(home.path)
    expect(processesMentioning(home.path)).toEqual([])
    home.remove()
  }
  await server?.close()
}, 60_000)

beforeEach(() => {
  server.reset()
})

/** A task waiting on the approval of `touch <marker>`, the workdir locked meanwhile. */
const waitingTask = async (marker: string) => {
  server.script(
    { type: "shell", command: `touch ${marker}`, escalate: "create the marker" },
    { type: "message", text: "must not be asked" }
  )
  const taskId = await submitCodex(stack.client, `create ${marker}`)
  const pending = await pendingOf(stack.client, taskId)
  const busy = await call(stack.client, "create_text_file", {
    workdir: "main",
    path: "busy.txt",
    content: "x"
  })
  expect(busy.content?.[0]?.text).toMatch(/^WORKDIR_BUSY/)
  return { taskId, pending }
}

/** The terminal state as get_agent_task shows it, then the workdir free within the bound. */
const expectReleased = async (taskId: string, status: string, errorCode: string | null, marker: string) => {
  const task = await finished(stack.client, taskId)
  expect({ status: task.status, error_code: task.error_code }).toEqual({ status, error_code: errorCode })
  await mutatesWithinBound(stack.client, `after-${marker}`)
  expect(fs.existsSync(path.join(stack.tree.root, marker))).toBe(false)
  expect(server.requests()).toHaveLength(1)
}

describe("Codex: every terminal path frees the workdir at once", () => {
  it("interaction expiry → interrupted; the workdir is free within 1 s", async () => {
    const { taskId } = await waitingTask("expired.txt")
    await expectReleased(taskId, "interrupted", "AGENT_INTERACTION_TIMED_OUT", "expired.txt")
  }, 120_000)

  it("cancel_agent_task → cancelled; the workdir is free within 1 s", async () => {
    const { taskId } = await waitingTask("cancelled.txt")
    expect((await ok(stack.client, "cancel_agent_task", { task_id: taskId })).status).toBe("cancelled")
    await expectReleased(taskId, "cancelled", null, "cancelled.txt")
  }, 120_000)

  it("a cancel_task decision → cancelled (never failed); the workdir is free within 1 s", async () => {
    const { taskId, pending } = await waitingTask("cancel-task.txt")
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "cancel_task"
    })
    await expectReleased(taskId, "cancelled", null, "cancel-task.txt")
  }, 120_000)

  it("bridge shutdown (SIGTERM) → interrupted; the workdir is free within 1 s of the bridge's exit", async () => {
    const { taskId } = await waitingTask("shutdown.txt")
    await stack.bridge.kill("SIGTERM")
    // No bridge now: serverfs-mcp's own flock and guard checks decide.
    await mutatesWithinBound(stack.client, "after-shutdown.txt")
    expect(fs.existsSync(path.join(stack.tree.root, "shutdown.txt"))).toBe(false)
    // The next bridge: a task deadline shorter than the interaction timeout (for the next test).
    const env = stack.env as Record<string, string>
    env.SERVERFS_AGENT_TASK_TIMEOUT_SECONDS = "25"
    env.SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS = "1800"
    await stack.bridge.restart()
    const task = await finished(stack.client, taskId)
    expect({ status: task.status, error_code: task.error_code }).toEqual({
      status: "interrupted",
      error_code: "BRIDGE_SHUTDOWN"
    })
  }, 180_000)

  it("the task deadline → interrupted; the workdir is free within 1 s", async () => {
    const { taskId } = await waitingTask("deadline.txt")
    await expectReleased(taskId, "interrupted", "AGENT_TASK_TIMED_OUT", "deadline.txt")
  }, 120_000)
})
