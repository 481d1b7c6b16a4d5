/**
 * The task API of a running daemon, through the real RPC client over its socket (spec v0.3
 * §10–§16/§25, v0.7 §2.1/§2.4, bridge-internals §2–§7): submission, the state machine,
 * approvals, questions, steering, cancel, continuation, idempotency, correlation, the manifest,
 * event cursors, authorization, paths and host-path redaction. The provider is the scripted
 * runtime `fake`. Limits, the result spool, deadlines and interaction expiry: limits.test.ts.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { BridgeClientService } from "@serverfs/rpc"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  assertBuilt,
  type Bridge,
  call,
  callCode,
  callError,
  callOutcome,
  eventTypes,
  getTask,
  killAll,
  makeSandbox,
  rawCall,
  type Sandbox,
  type SubmitInput,
  startBridge,
  stderrRecords,
  submitParams,
  TERMINAL,
  waitForEvent,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { nonTerminalTaskIds, plantTask } from "./support/store.js"

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")
const bytes = (text: string) => Buffer.byteLength(text, "utf8")

/** Canonical JSON written independently of the bridge: sorted keys, compact, recursively. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
      .join(",")}}`
  }
  return JSON.stringify(value)
}

let sandbox: Sandbox
let bridge: Bridge
const c = (): BridgeClientService => bridge.client

beforeAll(async () => {
  assertBuilt()
  sandbox = makeSandbox([
    {
      slot: 1,
      alias: "w1",
      mode: "workspace-write",
      runtimes: "fake",
      extra: { EXTRA_DENY_GLOBS: "private" }
    },
    { slot: 2, alias: "w2", mode: "workspace-write", runtimes: "codex" },
    // Read-only without delegation: the only kind of workdir another may be nested in (overlap rule).
    { slot: 3, alias: "w3", readOnly: true },
    { slot: 4, alias: "w4", mode: "review", runtimes: "fake" },
    { slot: 5, alias: "nested", dir: "w3/sub/inner", readOnly: true }
  ])
  const w1 = sandbox.workdir("w1")
  fs.mkdirSync(path.join(w1, ".hidden"))
  fs.mkdirSync(path.join(w1, "private"))
  fs.mkdirSync(path.join(w1, "docs"))
  fs.mkdirSync(path.join(w1, "sub", "inner"), { recursive: true })
  fs.writeFileSync(path.join(w1, "file.txt"), "x")
  fs.symlinkSync(path.join(w1, "docs"), path.join(w1, "link"))
  bridge = await startBridge(sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "50" }))
}, 60_000)

afterAll(async () => {
  await killAll()
  sandbox?.remove()
})

const submit = (input: SubmitInput) => call(c(), "task.submit", submitParams(input, "w1"))
const submitError = (input: SubmitInput) => callError(c(), "task.submit", submitParams(input, "w1"))
const cancel = (taskId: string) => call(c(), "task.cancel", { task_id: taskId })

/** Submit and wait until the task asks something; returns its id and the pending request. */
const untilPending = async (input: SubmitInput, status: "waiting_for_approval" | "waiting_for_question") => {
  const { task_id } = await submit(input)
  const view = await waitForStatus(c(), task_id, status)
  // The request is visible from its commit; its `*.requested` event follows.
  await waitForEvent(
    c(),
    task_id,
    status === "waiting_for_approval" ? "approval.requested" : "question.requested"
  )
  const pending = view.pending_request
  if (pending === undefined) throw new Error("no pending request")
  return { taskId: task_id, pending, view }
}

const respond = (taskId: string, requestId: string, decision: string, granted?: ReadonlyArray<string>) =>
  call(c(), "task.approval.respond", {
    task_id: taskId,
    request_id: requestId,
    decision,
    ...(granted === undefined ? {} : { granted_permission_ids: granted })
  })

const answer = (taskId: string, requestId: string, answers: ReadonlyArray<Record<string, unknown>>) =>
  call(c(), "task.question.answer", {
    task_id: taskId,
    request_id: requestId,
    answers: answers as never
  })

const answerCode = (taskId: string, requestId: string, answers: ReadonlyArray<Record<string, unknown>>) =>
  callCode(c(), "task.question.answer", { task_id: taskId, request_id: requestId, answers: answers as never })

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
    expect(fs.existsSync(path.join(sandbox.workdir("w1"), "after-cancel.txt"))).toBe(false)
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

describe("questions", () => {
  it("single choice", async () => {
    const { taskId, pending } = await untilPending({ prompt: "question:Pick one" }, "waiting_for_question")
    expect(pending.kind).toBe("question")
    expect(pending.payload).toEqual({
      questions: [
        {
          question_id: "q1",
          prompt: "Pick one",
          options: [
            { option_id: "a", label: "Option A" },
            { option_id: "b", label: "Option B", description: "the other one" }
          ],
          multi_select: false,
          allow_free_text: true
        }
      ]
    })
    await answer(taskId, pending.request_id, [{ question_id: "q1", selected_option_ids: ["b"] }])
    const done = await waitForStatus(c(), taskId, TERMINAL)
    expect(JSON.parse(done.final_response ?? "")).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: ["b"] }]
    })
    const events = await allEvents(c(), taskId)
    expect(eventTypes(events)).toEqual([
      "task.started",
      "turn.started",
      "question.requested",
      "question.answered",
      "task.completed"
    ])
    expect(events[3]?.payload).toEqual({ question_count: 1 })
  })

  it("multiple choice with text, and free text alone", async () => {
    const multi = await untilPending({ prompt: "multi-question:Pick some" }, "waiting_for_question")
    expect(multi.pending.payload).toMatchObject({ questions: [{ multi_select: true }] })
    await answer(multi.taskId, multi.pending.request_id, [
      { question_id: "q1", selected_option_ids: ["a", "b"], text: "and more" }
    ])
    const multiDone = await waitForStatus(c(), multi.taskId, TERMINAL)
    expect(JSON.parse(multiDone.final_response ?? "")).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: ["a", "b"], text: "and more" }]
    })

    const free = await untilPending({ prompt: "question:Say it" }, "waiting_for_question")
    await answer(free.taskId, free.pending.request_id, [
      { question_id: "q1", selected_option_ids: [], text: "my own words" }
    ])
    const freeDone = await waitForStatus(c(), free.taskId, TERMINAL)
    expect(JSON.parse(freeDone.final_response ?? "")).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: [], text: "my own words" }]
    })
  })

  it("every invalid answer shape is INVALID_QUESTION_ANSWER and leaves the question pending", async () => {
    const single = await untilPending({ prompt: "question:One" }, "waiting_for_question")
    const multi = await untilPending({ prompt: "multi-question:Many" }, "waiting_for_question")
    const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<Record<string, unknown>>]> = [
      ["unknown question", single.taskId, [{ question_id: "q9", selected_option_ids: ["a"] }]],
      [
        "repeated question",
        single.taskId,
        [
          { question_id: "q1", selected_option_ids: ["a"] },
          { question_id: "q1", selected_option_ids: ["b"] }
        ]
      ],
      ["unknown option", single.taskId, [{ question_id: "q1", selected_option_ids: ["z"] }]],
      [
        "two options on single-select",
        single.taskId,
        [{ question_id: "q1", selected_option_ids: ["a", "b"] }]
      ],
      ["an option twice", multi.taskId, [{ question_id: "q1", selected_option_ids: ["a", "a"] }]],
      ["empty answer", single.taskId, [{ question_id: "q1", selected_option_ids: [] }]],
      ["blank text", single.taskId, [{ question_id: "q1", selected_option_ids: [], text: "   " }]],
      ["missing question", single.taskId, []],
      ["missing question (multi)", multi.taskId, []]
    ]
    for (const [name, taskId, answers] of cases) {
      const requestId = taskId === single.taskId ? single.pending.request_id : multi.pending.request_id
      const e = await callError(c(), "task.question.answer", {
        task_id: taskId,
        request_id: requestId,
        answers: answers as never
      })
      expect(e.code, name).toBe("INVALID_QUESTION_ANSWER")
    }
    expect((await getTask(c(), single.taskId)).status).toBe("waiting_for_question")
    expect((await getTask(c(), multi.taskId)).status).toBe("waiting_for_question")
    // The bridge itself refuses an answer with a key it does not know (a raw request: the
    // client would not even send it).
    const raw = await rawCall(sandbox.socketPath, {
      protocol_version: 1,
      request_id: "raw-1",
      method: "task.question.answer",
      params: {
        task_id: single.taskId,
        request_id: single.pending.request_id,
        answers: [{ question_id: "q1", selected_option_ids: ["a"], other: 1 }]
      }
    })
    expect(raw).toMatchObject({ request_id: "raw-1", ok: false, error: { code: "INVALID_REQUEST" } })
    expect((await getTask(c(), single.taskId)).status).toBe("waiting_for_question")

    // A valid answer still works after all that; a second one is REQUEST_ALREADY_RESOLVED.
    await answer(single.taskId, single.pending.request_id, [
      { question_id: "q1", selected_option_ids: ["a"] }
    ])
    expect(
      await answerCode(single.taskId, single.pending.request_id, [
        { question_id: "q1", selected_option_ids: ["b"] }
      ])
    ).toBe("REQUEST_ALREADY_RESOLVED")
    await waitForStatus(c(), single.taskId, "succeeded")
    expect(
      await answerCode(single.taskId, single.pending.request_id, [
        { question_id: "q1", selected_option_ids: ["b"] }
      ])
    ).toBe("REQUEST_ALREADY_RESOLVED")
    await cancel(multi.taskId)
  })

  it("20 concurrent answers to one request: exactly one resolves it, the rest get REQUEST_ALREADY_RESOLVED", async () => {
    const { taskId, pending } = await untilPending({ prompt: "question:Race" }, "waiting_for_question")
    const codes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        answerCode(taskId, pending.request_id, [
          { question_id: "q1", selected_option_ids: [], text: `answer-${i}` }
        ])
      )
    )
    const winners = codes.flatMap((code, i) => (code === "OK" ? [i] : []))
    expect(winners).toHaveLength(1)
    expect(codes.filter((code) => code === "REQUEST_ALREADY_RESOLVED")).toHaveLength(19)
    const done = await waitForStatus(c(), taskId, TERMINAL)
    // The provider got exactly the winner's answer.
    expect(JSON.parse(done.final_response ?? "")).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: [], text: `answer-${winners[0]}` }]
    })
    expect(eventTypes(await allEvents(c(), taskId)).filter((t) => t === "question.answered")).toHaveLength(1)
  })

  it("20 concurrent approval responses: exactly one decision reaches the provider", async () => {
    const { taskId, pending } = await untilPending({ prompt: "approval:race" }, "waiting_for_approval")
    const decisions = ["approve_once", "approve_session", "deny"] as const
    const codes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        callCode(c(), "task.approval.respond", {
          task_id: taskId,
          request_id: pending.request_id,
          decision: decisions[i % 3] ?? "deny"
        })
      )
    )
    const winners = codes.flatMap((code, i) => (code === "OK" ? [i] : []))
    expect(winners).toHaveLength(1)
    expect(codes.filter((code) => code === "REQUEST_ALREADY_RESOLVED")).toHaveLength(19)
    const done = await waitForStatus(c(), taskId, TERMINAL)
    expect(done.final_response).toBe(`approval=${decisions[(winners[0] ?? 0) % 3]}`)
  })
})

describe("steering and cancel", () => {
  /** task.message.send, retried while the scripted turn has not registered yet (bounded). */
  const steer = (taskId: string, message: string) =>
    waitUntil("the turn to accept a message", async () => {
      const code = await callCode(c(), "task.message.send", { task_id: taskId, message })
      if (code === "AGENT_TASK_NOT_ACTIVE") return undefined
      return code
    })

  it("a message steers the running turn: result steered=<msg>; the event records only its size", async () => {
    const { task_id } = await submit({ prompt: "steer:" })
    await waitForStatus(c(), task_id, "running")
    expect(await steer(task_id, "focus on the API layer")).toBe("OK")
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("steered=focus on the API layer")
    const events = await allEvents(c(), task_id)
    const message = events.filter((e) => e.event_type === "user.message")
    expect(message.map((e) => e.payload)).toEqual([{ bytes: bytes("focus on the API layer") }])
    expect(JSON.stringify(events)).not.toContain("focus on the API layer")
  })

  it("a message to a finished task is AGENT_TASK_TERMINAL; to a task this bridge does not drive, AGENT_TASK_NOT_ACTIVE", async () => {
    const { task_id } = await submit({ prompt: "complete:done" })
    await waitForStatus(c(), task_id, "succeeded")
    const terminal = await callError(c(), "task.message.send", { task_id, message: "more" })
    expect(terminal.code).toBe("AGENT_TASK_TERMINAL")
    expect(terminal.message).toContain("continue_from_task_id")

    // A running task left in the database by another process: no live turn here.
    const orphan = await plantTask(sandbox.stateDir, {
      status: "running",
      workdirAlias: "w4",
      slot: 4,
      profile: "review",
      sessionId: "fake-session-planted"
    })
    const notActive = await callError(c(), "task.message.send", { task_id: orphan, message: "hello" })
    expect(notActive.code).toBe("AGENT_TASK_NOT_ACTIVE")
    expect(await cancel(orphan)).toMatchObject({ status: "cancelled" })

    const unknown = await callError(c(), "task.message.send", {
      task_id: "agt_000000000000000000000000",
      message: "x"
    })
    expect(unknown.code).toBe("AGENT_TASK_NOT_FOUND")
  })

  it("cancel twice: the second returns the same status and changes nothing; cancel of a finished task returns its status", async () => {
    const { task_id } = await submit({ prompt: "wait:", profile: "workspace-write" })
    await waitForStatus(c(), task_id, "running")
    expect(await cancel(task_id)).toEqual({ task_id, status: "cancelled", correlation_id: null })
    const first = await getTask(c(), task_id)
    expect(await cancel(task_id)).toEqual({ task_id, status: "cancelled", correlation_id: null })
    const second = await getTask(c(), task_id)
    expect(second.updated_at).toBe(first.updated_at)
    expect(second.completed_at).toBe(first.completed_at)
    expect(eventTypes(await allEvents(c(), task_id)).filter((t) => t === "task.cancelled")).toHaveLength(1)

    const finished = await submit({ prompt: "complete:fine" })
    await waitForStatus(c(), finished.task_id, "succeeded")
    expect(await cancel(finished.task_id)).toEqual({
      task_id: finished.task_id,
      status: "succeeded",
      correlation_id: null
    })
    const after = await getTask(c(), finished.task_id)
    expect(after.status).toBe("succeeded")
    expect(after.final_response).toBe("fine")
    expect(eventTypes(await allEvents(c(), finished.task_id))).not.toContain("task.cancelled")
    expect((await callError(c(), "task.cancel", { task_id: "agt_000000000000000000000000" })).code).toBe(
      "AGENT_TASK_NOT_FOUND"
    )
  })
})

describe("continue_from_task_id", () => {
  it("same runtime and workdir: a new task resumes the recorded session", async () => {
    const first = await submit({ prompt: "complete:one" })
    await waitForStatus(c(), first.task_id, "succeeded")
    const next = await submit({ prompt: "complete:two", continue_from_task_id: first.task_id })
    expect(next.task_id).not.toBe(first.task_id)
    const done = await waitForStatus(c(), next.task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("two")
    expect(done.continue_from_task_id).toBe(first.task_id)
    expect(done.manifest.continuation).toEqual({ from_task_id: first.task_id })
    const turn = (await allEvents(c(), next.task_id)).find((e) => e.event_type === "turn.started")
    expect(turn?.payload).toEqual({ continued: true })
    const firstTurn = (await allEvents(c(), first.task_id)).find((e) => e.event_type === "turn.started")
    expect(firstTurn?.payload).toEqual({})
    // The prior task is untouched.
    expect((await getTask(c(), first.task_id)).final_response).toBe("one")

    // A workspace-write task may continue as review (more restrictive).
    const ws = await submit({ prompt: "complete:ws", profile: "workspace-write" })
    await waitForStatus(c(), ws.task_id, "succeeded")
    const narrowed = await submit({ prompt: "complete:narrowed", continue_from_task_id: ws.task_id })
    expect((await waitForStatus(c(), narrowed.task_id, TERMINAL)).status).toBe("succeeded")
  })

  it("another workdir, a prior task not finished, an unknown prior task, or review → workspace-write are refused", async () => {
    const done = await submit({ prompt: "complete:base" })
    await waitForStatus(c(), done.task_id, "succeeded")
    expect(
      (await submitError({ prompt: "complete:x", workdir: "w4", continue_from_task_id: done.task_id })).code
    ).toBe("AGENT_SESSION_NOT_RESUMABLE")
    const busy = await submit({ prompt: "wait:" })
    await waitForStatus(c(), busy.task_id, "running")
    expect((await submitError({ prompt: "complete:x", continue_from_task_id: busy.task_id })).code).toBe(
      "AGENT_SESSION_NOT_RESUMABLE"
    )
    await cancel(busy.task_id)
    expect(
      (await submitError({ prompt: "complete:x", continue_from_task_id: "agt_000000000000000000000000" }))
        .code
    ).toBe("AGENT_TASK_NOT_FOUND")
    expect(
      (
        await submitError({
          prompt: "complete:x",
          profile: "workspace-write",
          continue_from_task_id: done.task_id
        })
      ).code
    ).toBe("AGENT_PROFILE_NOT_ALLOWED")
  })
})

describe("idempotency and correlation", () => {
  it("same key and request → the same task and its current status; another request → AGENT_IDEMPOTENCY_CONFLICT", async () => {
    const input = { prompt: "wait:", idempotency_key: "key-1" }
    const first = await submit(input)
    expect(first).toMatchObject({ status: "queued", idempotency_key: "key-1" })
    await waitForStatus(c(), first.task_id, "running")
    expect(await submit(input)).toEqual({
      task_id: first.task_id,
      status: "running",
      correlation_id: null,
      idempotency_key: "key-1"
    })
    expect((await submitError({ prompt: "wait:\n", idempotency_key: "key-1" })).code).toBe(
      "AGENT_IDEMPOTENCY_CONFLICT"
    )
    expect((await submitError({ ...input, workdir: "w4" })).code).toBe("AGENT_IDEMPOTENCY_CONFLICT")
    // correlation_id is never used for idempotency (spec v0.7 §2.1): a retry carrying another one
    // is the same request, answered with the original task (and its correlation id).
    expect(await submit({ ...input, correlation_id: "retry-2" })).toEqual({
      task_id: first.task_id,
      status: "running",
      correlation_id: null,
      idempotency_key: "key-1"
    })
    await cancel(first.task_id)
    expect(await submit(input)).toMatchObject({ task_id: first.task_id, status: "cancelled" })
    const view = await getTask(c(), first.task_id)
    expect(view.idempotency_key).toBe("key-1")
    expect(view.manifest.idempotency_key).toBe("key-1")

    for (const key of ["", "k".repeat(257), "bad\nkey"]) {
      expect((await submitError({ prompt: "complete:x", idempotency_key: key })).code).toBe("INVALID_REQUEST")
    }
  })

  it.each(["review", "workspace-write"])(
    "concurrent identical %s submissions with one key create one task",
    async (profile) => {
      const key = `concurrent-${profile}`
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          callOutcome(
            c(),
            "task.submit",
            submitParams({ prompt: "wait:", profile, idempotency_key: key }, "w1")
          )
        )
      )
      const failures = results.filter((r) => r.ok === false)
      expect(failures, JSON.stringify(failures)).toEqual([])
      const ids = new Set(results.map((r) => (r.ok ? r.value.task_id : "")))
      expect(ids.size).toBe(1)
      const [taskId] = [...ids]
      if (taskId === undefined) throw new Error("no task")
      const live = await nonTerminalTaskIds(sandbox.stateDir)
      expect(live).toContain(taskId)
      await cancel(taskId)
      await waitUntil("the lease to be released", async () =>
        (await callCode(c(), "task.submit", submitParams({ prompt: "complete:probe", profile }, "w1"))) ===
        "OK"
          ? true
          : undefined
      )
    }
  )

  it("correlation_id is on the submit result, task.get, every event envelope, the manifest and every answer", async () => {
    const correlation = "corr-Ünïcode-€-42"
    const submitted = await submit({ prompt: "say:hello\napproval:go", correlation_id: correlation })
    expect(submitted.correlation_id).toBe(correlation)
    const view = await waitForStatus(c(), submitted.task_id, "waiting_for_approval")
    expect(view.correlation_id).toBe(correlation)
    expect(view.manifest.correlation_id).toBe(correlation)
    const pending = view.pending_request
    if (pending === undefined) throw new Error("no request")
    const resolved = await respond(submitted.task_id, pending.request_id, "approve_once")
    expect(resolved.correlation_id).toBe(correlation)
    await waitForStatus(c(), submitted.task_id, "succeeded")
    const page = await call(c(), "task.events", { task_id: submitted.task_id })
    expect(page.correlation_id).toBe(correlation)
    expect(page.events.length).toBeGreaterThanOrEqual(6)
    for (const e of page.events) expect(e.correlation_id).toBe(correlation)
    expect((await cancel(submitted.task_id)).correlation_id).toBe(correlation)

    const steerTask = await submit({ prompt: "steer:", correlation_id: correlation })
    await waitForStatus(c(), steerTask.task_id, "running")
    const sent = await waitUntil("the steer to be accepted", async () => {
      const r = await callOutcome(c(), "task.message.send", { task_id: steerTask.task_id, message: "m" })
      return r.ok ? r.value : undefined
    })
    expect(sent.correlation_id).toBe(correlation)
    await waitForStatus(c(), steerTask.task_id, "succeeded")

    // Exactly 256 bytes is accepted; 257 bytes, 258 bytes of 86 characters, control characters are not.
    const ok = await submit({ prompt: "complete:x", correlation_id: "c".repeat(256) })
    expect(ok.correlation_id).toBe("c".repeat(256))
    for (const bad of ["c".repeat(257), "€".repeat(86), "tab\there", "bell\u0007", "del\u007f", "nl\n"]) {
      const e = await submitError({ prompt: "complete:x", correlation_id: bad })
      expect(e.code, JSON.stringify(bad)).toBe("INVALID_REQUEST")
    }
  })

  it("manifest_sha256 is the SHA-256 of the manifest's canonical JSON; the manifest holds no host path", async () => {
    const { task_id } = await submit({ prompt: "complete:m", path: "docs", correlation_id: "m-1" })
    const view = await waitForStatus(c(), task_id, "succeeded")
    expect(view.manifest_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(sha256(canonical(view.manifest))).toBe(view.manifest_sha256)
    expect(view.manifest).toMatchObject({
      schema_version: 2,
      protocol_version: 1,
      runtime: { name: "fake", version: "scripted-1", in_flight_recovery: "none" },
      workspace: { alias: "w1", slot: 1, relative_cwd: "docs", profile: "review" },
      policy: {
        read_only: false,
        agent_mode: "workspace-write",
        policy_sha256: expect.stringMatching(/^[0-9a-f]{64}$/)
      },
      continuation: { from_task_id: null },
      correlation_id: "m-1",
      idempotency_key: null,
      deadline_at: view.deadline_at
    })
    expect(view.manifest.limits).toMatchObject({
      max_prompt_bytes: 65_536,
      max_message_bytes: 65_536,
      max_events_per_task: 10_000,
      max_active_tasks: 50,
      result_spool_threshold_bytes: 262_144
    })
    expect(JSON.stringify(view.manifest)).not.toContain(sandbox.base)
    expect(JSON.stringify(view)).not.toContain(sandbox.base)
    // Same workdir policy, same policy hash; a different workdir policy, another hash.
    const other = await submit({ prompt: "complete:n", workdir: "w4" })
    const otherView = await waitForStatus(c(), other.task_id, "succeeded")
    expect(sha256(canonical(otherView.manifest))).toBe(otherView.manifest_sha256)
    expect(otherView.manifest.policy.policy_sha256).not.toBe(view.manifest.policy.policy_sha256)
  })
})

describe("events", () => {
  it("cursor pages are gap-free and duplicate-free; INVALID_LIMIT outside 1..500 or below cursor 0", async () => {
    const { task_id } = await submit({ prompt: "events:120" })
    await waitForStatus(c(), task_id, "succeeded")
    const whole = await call(c(), "task.events", { task_id, limit: 500 })
    expect(whole.events).toHaveLength(123)
    const ids = whole.events.map((e) => e.event_id)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    expect(whole.events.filter((e) => e.event_type === "agent.message").map((e) => e.payload)).toEqual(
      Array.from({ length: 120 }, (_, i) => ({ text: `message ${i + 1}` }))
    )

    const paged: Array<number> = []
    let cursor = 0
    for (;;) {
      const page = await call(c(), "task.events", { task_id, after_event_id: cursor, limit: 7 })
      expect(page.events.length).toBeLessThanOrEqual(7)
      if (page.events.length === 0) {
        expect(page.next_after_event_id).toBe(cursor)
        break
      }
      expect(page.next_after_event_id).toBe(page.events[page.events.length - 1]?.event_id)
      for (const e of page.events) expect(e.event_id).toBeGreaterThan(cursor)
      paged.push(...page.events.map((e) => e.event_id))
      cursor = page.next_after_event_id
    }
    expect(paged).toEqual(ids)
    // A cursor in the middle resumes right after it.
    const mid = ids[50] ?? 0
    const rest = await call(c(), "task.events", { task_id, after_event_id: mid, limit: 500 })
    expect(rest.events.map((e) => e.event_id)).toEqual(ids.slice(51))
    const past = await call(c(), "task.events", { task_id, after_event_id: 10 ** 9 })
    expect(past).toEqual({ correlation_id: null, events: [], next_after_event_id: 10 ** 9 })

    for (const params of [
      { limit: 0 },
      { limit: 501 },
      { limit: -1 },
      { after_event_id: -1 },
      { after_event_id: -1, limit: 10 }
    ]) {
      const e = await callError(c(), "task.events", { task_id, ...params })
      expect(e.code, JSON.stringify(params)).toBe("INVALID_LIMIT")
    }
    expect((await callError(c(), "task.events", { task_id: "agt_000000000000000000000000" })).code).toBe(
      "AGENT_TASK_NOT_FOUND"
    )
  })
})

describe("authorization and paths", () => {
  it("each refusal has its code", async () => {
    const cases: ReadonlyArray<readonly [string, SubmitInput]> = [
      ["WORKDIR_NOT_FOUND", { prompt: "complete:x", workdir: "nope" }],
      ["AGENT_DISABLED", { prompt: "complete:x", workdir: "w3" }],
      ["AGENT_RUNTIME_NOT_ALLOWED", { prompt: "complete:x", workdir: "w2" }],
      ["AGENT_RUNTIME_NOT_ALLOWED", { prompt: "complete:x", runtime: "claude" }],
      ["AGENT_RUNTIME_NOT_ALLOWED", { prompt: "complete:x", runtime: "bogus" }],
      ["AGENT_PROFILE_NOT_ALLOWED", { prompt: "complete:x", workdir: "w4", profile: "workspace-write" }],
      ["AGENT_PROFILE_NOT_ALLOWED", { prompt: "complete:x", profile: "admin" }],
      [
        "AGENT_PROFILE_NOT_ALLOWED",
        { prompt: "complete:x", workdir: "w2", runtime: "codex", profile: "review" }
      ]
    ]
    for (const [code, input] of cases)
      expect((await submitError(input)).code, JSON.stringify(input)).toBe(code)
  })

  it("INVALID_WORKDIR_PATH for escapes, absolute, hidden, denied, symlinked and non-directory paths; WORKDIR_PATH_NOT_FOUND", async () => {
    const invalid = [
      "..",
      "docs/../..",
      "/etc",
      "/",
      ".hidden",
      "private",
      "docs\\x",
      "file.txt",
      "link",
      "a\u0000b"
    ]
    for (const p of invalid) {
      const e = await submitError({ prompt: "complete:x", path: p })
      expect(e.code, JSON.stringify(p)).toBe("INVALID_WORKDIR_PATH")
      expect(e.message).not.toContain(sandbox.base)
    }
    for (const p of ["missing", "docs/missing"]) {
      expect((await submitError({ prompt: "complete:x", path: p })).code, p).toBe("WORKDIR_PATH_NOT_FOUND")
    }
    const ok = await submit({ prompt: "complete:x", path: "sub/inner" })
    expect((await waitForStatus(c(), ok.task_id, "succeeded")).relative_cwd).toBe("sub/inner")
  })

  it("write: files land in the task's directory of the workdir", async () => {
    const { task_id } = await submit({
      prompt: "write:made.txt=hello world",
      path: "docs",
      profile: "workspace-write"
    })
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(fs.readFileSync(path.join(sandbox.workdir("w1"), "docs", "made.txt"), "utf8")).toBe("hello world")
    expect(
      (await allEvents(c(), task_id)).find((e) => e.event_type === "file_change.started")?.payload
    ).toEqual({
      path: "made.txt"
    })
  })

  it("host paths in agent text, approvals and results are redacted to <workdir>, nested workdirs first", async () => {
    const w1 = sandbox.workdir("w1")
    const nested = sandbox.workdir("nested")
    const w4 = sandbox.workdir("w4")
    const { task_id } = await submit({
      prompt: [
        `say:editing ${w1}/src/app.ts and ${nested}/deep.txt near ${w4}`,
        `approval:rm -rf ${w1}/build`,
        `complete:wrote ${w1}/out.txt`
      ].join("\n")
    })
    const view = await waitForStatus(c(), task_id, "waiting_for_approval")
    expect(view.pending_request?.payload).toMatchObject({ command_display: "rm -rf <workdir>/build" })
    const pending = view.pending_request
    if (pending === undefined) throw new Error("no request")
    await respond(task_id, pending.request_id, "approve_once")
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.final_response).toBe("wrote <workdir>/out.txt")
    const events = await allEvents(c(), task_id)
    expect(events.find((e) => e.event_type === "agent.message")?.payload).toEqual({
      text: "editing <workdir>/src/app.ts and <workdir>/deep.txt near <workdir>"
    })
    expect(JSON.stringify(events)).not.toContain(sandbox.base)
    expect(JSON.stringify(await getTask(c(), task_id))).not.toContain(sandbox.base)
  })
})

describe("the daemon's output", () => {
  it("after all of the above, stdout is empty and stderr is JSON lines without host paths, prompts, messages or results", () => {
    expect(bridge.stdout()).toBe("")
    const records = stderrRecords(bridge.stderr())
    expect(records.length).toBeGreaterThan(0)
    for (const record of records) expect(typeof record.event).toBe("string")
    const stderr = bridge.stderr()
    for (const secret of [
      sandbox.base,
      "make build",
      "rm -rf",
      "focus on the API layer",
      "my own words",
      "answer-1",
      "approval=approve_once",
      "steered=",
      "hello world",
      "wrote <workdir>"
    ]) {
      expect(stderr, secret).not.toContain(secret)
    }
  })
})
