import { type AgentStack, readAllEvents, startAgentStack, waitForStatus } from "@serverfs/testkit"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import {
  awaitLeaseFree,
  call,
  cancelAll,
  eventually,
  expectNoHostPath,
  fails,
  ok,
  submit as submitTask,
  waitForEnd
} from "./support.js"

/**
 * Every limit and lifetime of the agent plane, with the code a chat client gets for it
 * (bridge-internals §3/§4, spec v0.7 §2.2/§2.5): sizes, the active-task cap, the result spool
 * ceiling, schema bounds, interaction expiry and the task deadline.
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

const MAX_PROMPT = 65_536
const MAX_MESSAGE = 65_536
const MAX_SPOOLED = 8_388_608

describe("size and count limits", () => {
  let stack: AgentStack
  const tasks = new Set<string>()

  beforeAll(async () => {
    stack = await startAgentStack({ prefix: "serverfs-agent-limits-" })
  })
  afterEach(async () => {
    await cancelAll(stack.client, tasks)
    tasks.clear()
    await awaitLeaseFree(stack)
  })
  afterAll(async () => {
    await stack?.stop()
  })

  const submit = async (prompt: string, extra: Record<string, unknown> = {}) => {
    const id = await submitTask(stack.client, prompt, extra)
    tasks.add(id)
    return id
  }
  const submitFails = (prompt: string, extra: Record<string, unknown> = {}) =>
    fails(stack.client, "submit_agent_task", { runtime: "fake", workdir: "main", prompt, ...extra })

  it("AGENT_PROMPT_TOO_LARGE past 65536 UTF-8 bytes; exactly the limit is accepted", async () => {
    const head = "complete:"
    const atLimit = head + "x".repeat(MAX_PROMPT - head.length)
    const id = await submit(atLimit)
    expect((await waitForEnd(stack.client, id, ["succeeded"])).final_response).toBe(
      "x".repeat(MAX_PROMPT - head.length)
    )
    expect((await submitFails(`${atLimit}x`)).text).toBe(
      `AGENT_PROMPT_TOO_LARGE: the prompt exceeds ${MAX_PROMPT} bytes`
    )
    // Bytes, not characters: 2-byte characters reach the limit at half the length.
    const wide = head + "é".repeat((MAX_PROMPT - head.length + 1) / 2)
    expect(Buffer.byteLength(wide)).toBe(MAX_PROMPT + 1)
    expect((await submitFails(wide)).code).toBe("AGENT_PROMPT_TOO_LARGE")
  })

  it("AGENT_MESSAGE_TOO_LARGE past 65536 bytes; the task keeps waiting for a message that fits", async () => {
    const id = await submit("say:ready\nsteer:", { profile: "review" })
    await eventually("ready", async () =>
      (await readAllEvents(stack.client, id)).find((e) => e.payload.text === "ready")
    )
    const tooLarge = await fails(stack.client, "send_agent_message", {
      task_id: id,
      message: "m".repeat(MAX_MESSAGE + 1)
    })
    expect(tooLarge.text).toBe(`AGENT_MESSAGE_TOO_LARGE: the message exceeds ${MAX_MESSAGE} bytes`)
    expect((await ok(stack.client, "get_agent_task", { task_id: id })).status).toBe("running")
    await ok(stack.client, "send_agent_message", { task_id: id, message: "m".repeat(MAX_MESSAGE) })
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(done.final_response).toBe(`steered=${"m".repeat(MAX_MESSAGE)}`)
  })

  it("AGENT_TASK_LIMIT_REACHED beyond 4 active tasks; a finished one frees its place", async () => {
    const active: string[] = []
    for (let i = 0; i < 4; i++) active.push(await submit("wait:", { profile: "review" }))
    const refused = await submitFails("complete:fifth", { profile: "review" })
    expect(refused.code).toBe("AGENT_TASK_LIMIT_REACHED")
    // The refused submission left nothing behind: after one cancel exactly one place is free.
    await ok(stack.client, "cancel_agent_task", { task_id: active[0] })
    const fifth = await submit("wait:", { profile: "review" })
    expect((await submitFails("complete:sixth", { profile: "review" })).code).toBe("AGENT_TASK_LIMIT_REACHED")
    await ok(stack.client, "cancel_agent_task", { task_id: fifth })
    const sixth = await submit("complete:sixth", { profile: "review" })
    expect((await waitForEnd(stack.client, sixth, ["succeeded"])).final_response).toBe("sixth")
  })

  it("AGENT_RESULT_TOO_LARGE: a result past 8 MiB fails the task; exactly 8 MiB is spooled", async () => {
    const tooLarge = await submit(`large:${MAX_SPOOLED + 1}`)
    const failed = await waitForEnd(stack.client, tooLarge, ["succeeded", "failed"], 60_000)
    expect(failed).toMatchObject({
      status: "failed",
      error_code: "AGENT_RESULT_TOO_LARGE",
      final_response: null,
      result: null
    })
    const events = await readAllEvents(stack.client, tooLarge)
    expect(events.at(-1)).toMatchObject({
      event_type: "task.failed",
      payload: { error_code: "AGENT_RESULT_TOO_LARGE" }
    })
    const atLimit = await submit(`large:${MAX_SPOOLED}`)
    const spooled = await waitForEnd(stack.client, atLimit, ["succeeded", "failed"], 60_000)
    expect(spooled).toMatchObject({
      status: "succeeded",
      result: { storage: "spool", size_bytes: MAX_SPOOLED, retrievable: true }
    })
    const tail = await ok(stack.client, "read_agent_task_result", {
      task_id: atLimit,
      offset_bytes: MAX_SPOOLED - 2,
      max_bytes: 65_536
    })
    expect(tail).toMatchObject({
      text: "aa",
      offset_bytes: MAX_SPOOLED - 2,
      next_offset_bytes: MAX_SPOOLED,
      eof: true
    })
  })

  it("schema bounds: max_bytes 1..65536 and limit 1..500 are INVALID_ARGUMENT naming the field", async () => {
    const id = await submit("complete:bounded")
    await waitForEnd(stack.client, id, ["succeeded"])
    for (const maxBytes of [65_537, 0, 1.5]) {
      const refused = await fails(stack.client, "read_agent_task_result", {
        task_id: id,
        max_bytes: maxBytes
      })
      expect(refused.code).toBe("INVALID_ARGUMENT")
      expect(refused.text).toContain("max_bytes")
    }
    const negative = await fails(stack.client, "read_agent_task_result", { task_id: id, offset_bytes: -1 })
    expect(negative.text).toContain("offset_bytes")
    for (const limit of [501, 0]) {
      const refused = await fails(stack.client, "read_agent_task_events", { task_id: id, limit })
      expect(refused.code).toBe("INVALID_ARGUMENT")
      expect(refused.text).toContain("limit")
    }
    const cursor = await fails(stack.client, "read_agent_task_events", { task_id: id, after_event_id: -1 })
    expect(cursor.code).toBe("INVALID_ARGUMENT")
    expect(cursor.text).toContain("after_event_id")
    // A boolean is never an integer; unknown fields are refused.
    expect((await fails(stack.client, "read_agent_task_events", { task_id: id, limit: true })).code).toBe(
      "INVALID_ARGUMENT"
    )
    const unknown = await fails(stack.client, "get_agent_task", { task_id: id, verbose: true })
    expect(unknown.code).toBe("INVALID_ARGUMENT")
    expect(unknown.text).toContain("verbose")
    // The bounds themselves are accepted.
    await ok(stack.client, "read_agent_task_events", { task_id: id, limit: 500 })
    await ok(stack.client, "read_agent_task_events", { task_id: id, limit: 1 })
    expect(
      (await fails(stack.client, "read_agent_task_result", { task_id: id, max_bytes: 65_536 })).code
    ).toBe("AGENT_RESULT_NOT_RETRIEVABLE")
  })

  it("opaque metadata is bounded: correlation_id, idempotency_key and model → INVALID_REQUEST from the bridge", async () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ correlation_id: "c".repeat(257) }, "INVALID_REQUEST: correlation_id exceeds 256 bytes"],
      [{ correlation_id: "line\nbreak" }, "INVALID_REQUEST: correlation_id contains control characters"],
      [{ idempotency_key: "" }, "INVALID_REQUEST: idempotency_key must not be empty"],
      [{ idempotency_key: "k".repeat(257) }, "INVALID_REQUEST: idempotency_key exceeds 256 bytes"],
      [{ model: " padded " }, "INVALID_REQUEST: model must be non-empty without surrounding whitespace"]
    ]
    for (const [extra, text] of cases) {
      expect((await submitFails("complete:x", extra)).text, JSON.stringify(extra)).toBe(text)
    }
    // The bounds themselves pass.
    const id = await submit("complete:ok", {
      correlation_id: "c".repeat(256),
      idempotency_key: "k".repeat(256)
    })
    expect((await waitForEnd(stack.client, id, ["succeeded"])).correlation_id).toBe("c".repeat(256))
  })

  it("unknown task ids: AGENT_TASK_NOT_FOUND from every task tool", async () => {
    const taskId = "agt_ffffffffffffffffffffffff"
    for (const [tool, args] of [
      ["get_agent_task", {}],
      ["read_agent_task_events", {}],
      ["read_agent_task_result", {}],
      ["cancel_agent_task", {}],
      ["send_agent_message", { message: "hi" }],
      ["respond_agent_approval", { request_id: "req_x", decision: "deny" }],
      ["answer_agent_question", { request_id: "req_x", answers: [{ question_id: "q1", text: "t" }] }]
    ] as const) {
      const result = await call(stack.client, tool, { task_id: taskId, ...args })
      expect(result.isError, tool).toBe(true)
      expect((await fails(stack.client, tool, { task_id: taskId, ...args })).text, tool).toBe(
        "AGENT_TASK_NOT_FOUND: no such task"
      )
    }
  })

  it("no host path in anything the client received", () => {
    expectNoHostPath(stack)
  })
})

describe("lifetimes", () => {
  let stack: AgentStack

  beforeAll(async () => {
    stack = await startAgentStack({
      prefix: "serverfs-agent-lifetimes-",
      env: () => ({
        SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "1",
        SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "15"
      })
    })
  })
  afterAll(async () => {
    await stack?.stop()
  })

  it("an unanswered approval or question expires: interrupted, AGENT_INTERACTION_TIMED_OUT, late answers REQUEST_STALE", async () => {
    const approval = await submitTask(stack.client, "approval:make deploy")
    const question = await submitTask(stack.client, "question:Which one?", { profile: "review" })
    for (const [id, kind] of [
      [approval, "approval"],
      [question, "question"]
    ] as const) {
      const done = await waitForEnd(stack.client, id, ["interrupted", "succeeded", "failed", "cancelled"])
      expect(done).toMatchObject({ status: "interrupted", error_code: "AGENT_INTERACTION_TIMED_OUT" })
      expect(done).not.toHaveProperty("pending_request")
      const events = await readAllEvents(stack.client, id)
      const requested = events.find((e) => e.event_type === `${kind}.requested`)
      const requestId = requested?.payload.request_id as string
      expect(Date.parse(requested?.payload.expires_at as string)).toBeLessThanOrEqual(
        Date.parse(done.deadline_at as string)
      )
      expect(events.find((e) => e.event_type === "interaction.expired")?.payload).toEqual({
        request_id: requestId,
        kind
      })
      expect(events.filter((e) => e.event_type === "task.interrupted")).toHaveLength(1)
      const late =
        kind === "approval"
          ? await fails(stack.client, "respond_agent_approval", {
              task_id: id,
              request_id: requestId,
              decision: "approve_once"
            })
          : await fails(stack.client, "answer_agent_question", {
              task_id: id,
              request_id: requestId,
              answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
            })
      expect(late.code).toBe("REQUEST_STALE")
    }
    // The interrupted writer's lease and guard go: MCP mutations are accepted again.
    await awaitLeaseFree(stack)
    const created = await eventually("create_text_file accepted", async () => {
      const result = await call(stack.client, "create_text_file", {
        workdir: "main",
        path: "after.txt",
        content: "x"
      })
      return result.isError === true ? undefined : result.structuredContent
    })
    expect(created).toMatchObject({ created: true })
  })

  it("a task past its deadline is interrupted with AGENT_TASK_TIMED_OUT", async () => {
    const id = await submitTask(stack.client, "wait:", { profile: "review" })
    const done = await waitForStatus(
      stack.client,
      id,
      ["interrupted", "succeeded", "failed", "cancelled"],
      60_000
    )
    expect(done).toMatchObject({ status: "interrupted", error_code: "AGENT_TASK_TIMED_OUT" })
    const events = await readAllEvents(stack.client, id)
    expect(events.filter((e) => e.event_type === "task.interrupted").map((e) => e.payload)).toEqual([
      { error_code: "AGENT_TASK_TIMED_OUT" }
    ])
    expect(Date.parse(done.completed_at as string)).toBeGreaterThanOrEqual(
      Date.parse(done.deadline_at as string)
    )
  })

  it("no host path in anything the client received", () => {
    expectNoHostPath(stack)
  })
})
