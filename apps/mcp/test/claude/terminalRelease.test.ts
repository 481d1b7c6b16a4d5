/**
 * Issue 15 item 3 with the real Claude Code CLI (fake Messages API) through serverfs-mcp and the
 * bridge: every terminal path the bridge decides for a workspace-write task waiting on a Bash
 * approval — the interaction's expiry, cancel_agent_task, bridge shutdown, the task's deadline —
 * frees the workdir within one second of the terminal state, and the command never runs. The
 * issue measured Claude fine; this proves it stays so with the one stop path
 * (Terminations.stopRun → the adapter's `query.interrupt()`).
 *
 * One stack for the file. The deadline needs a task timeout shorter than the interaction
 * timeout, so it runs last, on the bridge the shutdown test restarts with those values changed.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { bashReply, textReply, waitForStatus } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mutatesWithinBound } from "../releaseBound.js"
import { type ClaudeStack, call, finished, ok, startClaudeStack, submitWhenFree } from "./support.js"

let cs: ClaudeStack

beforeAll(async () => {
  cs = await startClaudeStack("sfc-release-", {
    SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "6",
    SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "600"
  })
}, 120_000)

afterAll(async () => {
  await cs?.stop()
}, 60_000)

const client = () => cs.stack.client

/** A task waiting on the approval of a command that would write `marker`, the workdir locked. */
const waitingTask = async (marker: string) => {
  cs.server.clear()
  cs.server.queue([
    bashReply(`python3 -c "open('${marker}','w').write('x')"`, "Write the marker"),
    textReply("must not be asked")
  ])
  const { taskId } = await submitWhenFree(client(), `write ${marker}`)
  const waiting = await waitForStatus(client(), taskId, ["waiting_for_approval"], 60_000)
  const busy = await call(client(), "create_text_file", { workdir: "main", path: "busy.txt", content: "x" })
  expect(busy.content?.[0]?.text).toMatch(/^WORKDIR_BUSY/)
  return { taskId, pending: waiting.pending_request as { request_id: string } }
}

const expectReleased = async (taskId: string, status: string, errorCode: string | null, marker: string) => {
  const task = await finished(client(), taskId)
  expect({ status: task.status, error_code: task.error_code }).toEqual({ status, error_code: errorCode })
  await mutatesWithinBound(client(), `after-${marker}`)
  expect(fs.existsSync(path.join(cs.stack.tree.root, marker))).toBe(false)
}

describe("Claude: every terminal path frees the workdir at once", () => {
  it("interaction expiry → interrupted; the workdir is free within 1 s", async () => {
    const { taskId } = await waitingTask("expired.txt")
    await expectReleased(taskId, "interrupted", "AGENT_INTERACTION_TIMED_OUT", "expired.txt")
  }, 120_000)

  it("cancel_agent_task → cancelled; the workdir is free within 1 s", async () => {
    const { taskId } = await waitingTask("cancelled.txt")
    expect((await ok(client(), "cancel_agent_task", { task_id: taskId })).status).toBe("cancelled")
    await expectReleased(taskId, "cancelled", null, "cancelled.txt")
  }, 120_000)

  it("a cancel_task decision → cancelled (never failed); the workdir is free within 1 s", async () => {
    const { taskId, pending } = await waitingTask("cancel-task.txt")
    await ok(client(), "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "cancel_task"
    })
    await expectReleased(taskId, "cancelled", null, "cancel-task.txt")
  }, 120_000)

  it("bridge shutdown (SIGTERM) → interrupted; the workdir is free within 1 s of the bridge's exit", async () => {
    const { taskId } = await waitingTask("shutdown.txt")
    await cs.stack.bridge.kill("SIGTERM")
    // No bridge now: serverfs-mcp's own flock and guard checks decide.
    await mutatesWithinBound(client(), "after-shutdown.txt")
    expect(fs.existsSync(path.join(cs.stack.tree.root, "shutdown.txt"))).toBe(false)
    const env = cs.stack.env as Record<string, string>
    env.SERVERFS_AGENT_TASK_TIMEOUT_SECONDS = "20"
    env.SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS = "1800"
    await cs.stack.bridge.restart()
    const task = await finished(client(), taskId)
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
