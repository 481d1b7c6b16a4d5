/**
 * The task API of a running daemon, through the real RPC client over its socket (spec v0.3
 * §10–§16/§25, v0.7 §2.1/§2.4, bridge-internals §2–§7): submission and the state machine,
 * approvals. The provider is the scripted runtime `fake`. Questions: tasksQuestions.test.ts;
 * steering, cancel, continuation, idempotency, correlation and the manifest:
 * tasksControl.test.ts; event cursors, authorization, paths and redaction: tasksPaths.test.ts.
 * Limits, the result spool, deadlines and interaction expiry: limits.test.ts.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { allEvents, callError, eventTypes, getTask, TERMINAL, waitForStatus } from "./support/daemon.js"
import { bytes, sha256, useTaskBridge } from "./support/taskApi.js"

const t = useTaskBridge()
const { c, submit, cancel, untilPending, respond } = t

describe("submission and the state machine", () => {
  it("submit returns at once with status queued, without waiting for the turn", async () => {
    const result = await submit({ prompt: "wait:" })
    expect(result).toEqual({
      task_id: expect.stringMatching(/^agt_[0-9a-f]{24}$/),
      status: "queued",
      correlation_id: null,
      idempotency_key: null
    })
    const running = await waitForStatus(c(), result.task_id, "running")
    expect(running.started_at).not.toBeNull()
    expect(running.completed_at).toBeNull()
    expect(await cancel(result.task_id)).toEqual({
      task_id: result.task_id,
      status: "cancelled",
      correlation_id: null
    })
  })

  it("queued → starting → running → waiting_for_approval → running → succeeded", async () => {
    const { taskId, pending, view } = await untilPending(
      { prompt: "approval:make build" },
      "waiting_for_approval"
    )
    expect(view.pending_request_id).toBe(pending.request_id)
    expect(pending).toMatchObject({
      request_id: expect.stringMatching(/^req_[0-9a-f]{24}$/),
      task_id: taskId,
      kind: "approval",
      status: "pending",
      resolved_at: null,
      resolution: null,
      payload: {
        category: "command",
        title: "Run a command",
        command_display: "make build",
        available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"]
      }
    })
    expect(Date.parse(pending.expires_at)).toBeGreaterThan(Date.parse(pending.created_at))
    expect(Date.parse(pending.expires_at)).toBeLessThanOrEqual(Date.parse(view.deadline_at))

    expect(await respond(taskId, pending.request_id, "approve_once")).toEqual({
      task_id: taskId,
      request_id: pending.request_id,
      resolved: true,
      correlation_id: null
    })
    const done = await waitForStatus(c(), taskId, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("approval=approve_once")
    expect(done.final_response_truncated).toBe(false)
    expect(done.result).toEqual({
      storage: "inline",
      size_bytes: bytes("approval=approve_once"),
      sha256: sha256("approval=approve_once"),
      retrievable: false
    })
    expect(done.pending_request_id).toBeNull()
    expect(done.pending_request).toBeUndefined()
    expect(done.error_code).toBeNull()
    expect(Date.parse(done.completed_at ?? "")).toBeGreaterThanOrEqual(Date.parse(done.started_at ?? ""))

    const events = await allEvents(c(), taskId)
    expect(eventTypes(events)).toEqual([
      "task.started",
      "turn.started",
      "approval.requested",
      "approval.resolved",
      "task.completed"
    ])
    expect(events[0]?.payload).toEqual({ runtime: "fake" })
    expect(events[2]?.payload).toEqual({ request_id: pending.request_id, expires_at: pending.expires_at })
    expect(events[3]?.payload).toEqual({ decision: "approve_once" })
    expect(events[4]?.payload).toEqual({
      result_storage: "inline",
      result_size_bytes: bytes("approval=approve_once")
    })
    for (const e of events)
      expect(e).toMatchObject({ schema_version: 1, task_id: taskId, correlation_id: null })
  })

  it.each(["approve_session", "deny"])("approval decision %s reaches the provider", async (decision) => {
    const { taskId, pending } = await untilPending({ prompt: "approval:ls" }, "waiting_for_approval")
    await respond(taskId, pending.request_id, decision)
    const done = await waitForStatus(c(), taskId, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe(`approval=${decision}`)
  })

  it("a provider failure fails the task with its code and message", async () => {
    const { task_id } = await submit({ prompt: "say:trying\nfail:boom" })
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done).toMatchObject({
      status: "failed",
      error_code: "AGENT_PROVIDER_ERROR",
      error_message: "boom",
      final_response: null,
      result: null
    })
    const events = await allEvents(c(), task_id)
    expect(eventTypes(events)).toEqual(["task.started", "turn.started", "agent.message", "task.failed"])
    expect(events[3]?.payload).toEqual({ error_code: "AGENT_PROVIDER_ERROR" })
  })

  it("cancel_task resolves the approval and the task is cancelled before the call returns", async () => {
    const { taskId, pending } = await untilPending(
      { prompt: "approval:deploy\nwrite:after-cancel.txt=1" },
      "waiting_for_approval"
    )
    await respond(taskId, pending.request_id, "cancel_task")
    const view = await getTask(c(), taskId)
    expect(view.status).toBe("cancelled")
    expect(view.pending_request_id).toBeNull()
    expect(view.final_response).toBeNull()
    const types = eventTypes(await allEvents(c(), taskId))
    expect(types.filter((t) => t === "task.cancelled")).toHaveLength(1)
    expect(types).toContain("approval.resolved")
    expect(fs.existsSync(path.join(t.sandbox().workdir("w1"), "after-cancel.txt"))).toBe(false)
    // Answering again: the request was resolved.
    expect(
      (
        await callError(c(), "task.approval.respond", {
          task_id: taskId,
          request_id: pending.request_id,
          decision: "approve_once"
        })
      ).code
    ).toBe("REQUEST_ALREADY_RESOLVED")
  })

  it("a permission approval grants a subset of the requested ids; an id not requested is PERMISSION_OUTSIDE_POLICY", async () => {
    const { taskId, pending } = await untilPending(
      { prompt: "permission:net,fs,env" },
      "waiting_for_approval"
    )
    expect(pending.payload).toMatchObject({
      category: "provider_permission",
      requested_permissions: [
        { permission_id: "net", kind: "scripted" },
        { permission_id: "fs", kind: "scripted" },
        { permission_id: "env", kind: "scripted" }
      ]
    })
    const outside = await callError(c(), "task.approval.respond", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once",
      granted_permission_ids: ["net", "root"]
    })
    expect(outside.code).toBe("PERMISSION_OUTSIDE_POLICY")
    // A refused answer leaves the request pending.
    expect((await getTask(c(), taskId)).status).toBe("waiting_for_approval")
    await respond(taskId, pending.request_id, "approve_once", ["net", "env"])
    const done = await waitForStatus(c(), taskId, TERMINAL)
    expect(done.final_response).toBe("permission=approve_once granted=net,env")
  })

  it("a decision that is not a decision is INVALID_APPROVAL_DECISION; so is answering a question with one", async () => {
    const { taskId, pending } = await untilPending({ prompt: "approval:x" }, "waiting_for_approval")
    for (const decision of ["approve_forever", "APPROVE_ONCE", ""]) {
      const e = await callError(c(), "task.approval.respond", {
        task_id: taskId,
        request_id: pending.request_id,
        decision
      })
      expect(e.code).toBe("INVALID_APPROVAL_DECISION")
    }
    expect(
      (
        await callError(c(), "task.question.answer", {
          task_id: taskId,
          request_id: pending.request_id,
          answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
        })
      ).code
    ).toBe("INVALID_QUESTION_ANSWER")
    expect((await getTask(c(), taskId)).status).toBe("waiting_for_approval")
    await respond(taskId, pending.request_id, "deny")
    await waitForStatus(c(), taskId, "succeeded")

    const q = await untilPending({ prompt: "question:Which?" }, "waiting_for_question")
    const e = await callError(c(), "task.approval.respond", {
      task_id: q.taskId,
      request_id: q.pending.request_id,
      decision: "approve_once"
    })
    expect(e.code).toBe("INVALID_APPROVAL_DECISION")
    await cancel(q.taskId)
  })

  it("unknown requests are REQUEST_NOT_FOUND, also another task's request", async () => {
    const a = await untilPending({ prompt: "approval:a" }, "waiting_for_approval")
    const b = await untilPending({ prompt: "approval:b" }, "waiting_for_approval")
    const unknown = await callError(c(), "task.approval.respond", {
      task_id: a.taskId,
      request_id: "req_000000000000000000000000",
      decision: "deny"
    })
    expect(unknown.code).toBe("REQUEST_NOT_FOUND")
    const crossed = await callError(c(), "task.approval.respond", {
      task_id: a.taskId,
      request_id: b.pending.request_id,
      decision: "deny"
    })
    expect(crossed.code).toBe("REQUEST_NOT_FOUND")
    const noTask = await callError(c(), "task.approval.respond", {
      task_id: "agt_000000000000000000000000",
      request_id: a.pending.request_id,
      decision: "deny"
    })
    expect(noTask.code).toBe("AGENT_TASK_NOT_FOUND")
    await cancel(a.taskId)
    await cancel(b.taskId)
    // A request staled by the cancel is REQUEST_STALE.
    const stale = await callError(c(), "task.approval.respond", {
      task_id: a.taskId,
      request_id: a.pending.request_id,
      decision: "deny"
    })
    expect(stale.code).toBe("REQUEST_STALE")
  })
})

t.checkDaemonOutput()
