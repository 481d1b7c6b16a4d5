import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import {
  type AgentEvent,
  type AgentStack,
  readAllEvents,
  startAgentStack,
  waitForStatus
} from "@serverfs/testkit"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import {
  auditArrived,
  auditOf,
  awaitLeaseFree,
  call,
  cancelAll,
  eventually,
  expectNoHostPath,
  expectNotLogged,
  fails,
  ok,
  submit as submitTask,
  waitForEnd
} from "./support.js"

/**
 * Delegated tasks end to end (spec v0.3 §13, §15, §16, §21, §30 "MCP E2E"; v0.7 §2.5):
 * MCP SDK client → serverfs-mcp (stdio) → UDS → serverfs-bridge → scripted runtime → the real
 * workdir. Every prompt, answer, steering text and result carries a marker that must never reach
 * either process's stderr, and several carry the workdir's host path, which the client must
 * never see.
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

let stack: AgentStack
const tasks = new Set<string>()

const MARK = randomBytes(6).toString("hex")
const SECRET = {
  prompt: `PROMPT-${MARK}`,
  result: `RESULT-${MARK}`,
  answer: `ANSWER-${MARK}`,
  steer: `STEER-${MARK}`
}

beforeAll(async () => {
  stack = await startAgentStack({
    prefix: "serverfs-agent-tasks-",
    setup: (tree) => {
      tree.file("notes.txt", "version one\n")
      tree.file("src/app.ts", "export const app = 1\n")
      tree.dir("sub/inner")
    }
  })
})

afterEach(async () => {
  await cancelAll(stack.client, tasks)
  tasks.clear()
  await awaitLeaseFree(stack)
})

afterAll(async () => {
  await stack?.stop()
})

const submit = async (prompt: string, extra: Record<string, unknown> = {}): Promise<string> => {
  const id = await submitTask(stack.client, prompt, extra)
  tasks.add(id)
  return id
}

const task = (id: string) => ok(stack.client, "get_agent_task", { task_id: id })
const events = (id: string) => readAllEvents(stack.client, id)
const types = (list: ReadonlyArray<AgentEvent>) => list.map((e) => e.event_type)

/** Wait until the task has emitted an event of `type` (e.g. the scripted `say:ready`). */
const awaitEvent = (id: string, predicate: (e: AgentEvent) => boolean) =>
  eventually(`an event of ${id}`, async () => (await events(id)).find(predicate))

const ready = (id: string) =>
  awaitEvent(id, (e) => e.event_type === "agent.message" && e.payload.text === "ready")

/** The pending request of a waiting task. */
const pendingOf = (view: Record<string, unknown>) =>
  view.pending_request as {
    request_id: string
    kind: string
    status: string
    payload: Record<string, unknown>
  }

/** Deterministic text of exactly `bytes` UTF-8 bytes, as the scripted `large:` command makes it. */
const largeText = (bytes: number): string => {
  const whole = Math.floor(bytes / 6)
  return "aé€".repeat(whole) + "a".repeat(bytes - whole * 6)
}

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex")

describe("submission and polling", () => {
  it("submit returns at once with a queued task that keeps running in the background", async () => {
    const result = await ok(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: `say:${SECRET.prompt}\nwait:`,
      correlation_id: "corr-submit"
    })
    const id = result.task_id as string
    tasks.add(id)
    expect(result).toEqual({
      task_id: id,
      status: "queued",
      correlation_id: "corr-submit",
      idempotency_key: null
    })
    // The call did not wait: the task runs on (a `wait:` script never ends by itself).
    const view = await task(id)
    expect(["queued", "starting", "running"]).toContain(view.status)
    const running = await waitForStatus(stack.client, id, ["running"])
    expect(running).toMatchObject({
      task_id: id,
      runtime: "fake",
      workdir_alias: "main",
      workdir_slot: 1,
      relative_cwd: "",
      profile: "workspace-write",
      correlation_id: "corr-submit",
      completed_at: null,
      final_response: null,
      result: null,
      error_code: null,
      pending_request_id: null
    })
    expect(running.manifest_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(running).not.toHaveProperty("native_session_id")
    expect(running).not.toHaveProperty("request_fingerprint")
    // Still running after more round trips.
    expect((await task(id)).status).toBe("running")
  })

  it("a finished task has its final response, timestamps, and one terminal event", async () => {
    const id = await submit(`say:${SECRET.prompt}\ncomplete:${SECRET.result}`)
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(done).toMatchObject({
      status: "succeeded",
      final_response: SECRET.result,
      final_response_truncated: false,
      error_code: null,
      result: {
        storage: "inline",
        size_bytes: Buffer.byteLength(SECRET.result),
        sha256: sha256(SECRET.result),
        retrievable: false
      }
    })
    expect(typeof done.completed_at).toBe("string")
    expect(types(await events(id))).toEqual([
      "task.started",
      "turn.started",
      "agent.message",
      "task.completed"
    ])
  })

  it("events page by cursor: no gap, no repeat, ascending ids, the v1 envelope", async () => {
    const id = await submit("events:7\ncomplete:paged", { correlation_id: "corr-events" })
    await waitForEnd(stack.client, id, ["succeeded"])
    const full = await events(id)
    expect(types(full)).toEqual([
      "task.started",
      "turn.started",
      ...Array.from({ length: 7 }, () => "agent.message"),
      "task.completed"
    ])
    expect(full.map((e) => e.payload.text).filter((t) => t !== undefined)).toEqual(
      Array.from({ length: 7 }, (_, i) => `message ${i + 1}`)
    )
    for (const [i, e] of full.entries()) {
      expect(Object.keys(e).sort()).toEqual(
        [
          "correlation_id",
          "created_at",
          "event_id",
          "event_type",
          "payload",
          "schema_version",
          "task_id"
        ].sort()
      )
      expect(e).toMatchObject({ task_id: id, correlation_id: "corr-events", schema_version: 1 })
      if (i > 0) expect(e.event_id).toBeGreaterThan(full[i - 1]?.event_id ?? Number.POSITIVE_INFINITY)
    }
    // Pages of 3, each cursor the previous page's last id.
    const paged: AgentEvent[] = []
    let cursor = 0
    for (;;) {
      const page = await ok(stack.client, "read_agent_task_events", {
        task_id: id,
        after_event_id: cursor,
        limit: 3
      })
      const batch = page.events as ReadonlyArray<AgentEvent>
      expect(page.correlation_id).toBe("corr-events")
      expect(batch.length).toBeLessThanOrEqual(3)
      if (batch.length === 0) {
        // An empty page hands the cursor back unchanged.
        expect(page.next_after_event_id).toBe(cursor)
        break
      }
      expect(page.next_after_event_id).toBe(batch[batch.length - 1]?.event_id)
      paged.push(...batch)
      cursor = page.next_after_event_id as number
    }
    expect(paged).toEqual(full)
    // Resuming from the middle gives exactly the rest; the default limit is 100.
    const middle = full[4]?.event_id ?? 0
    const rest = await ok(stack.client, "read_agent_task_events", { task_id: id, after_event_id: middle })
    expect(rest.events).toEqual(full.slice(5))
  })

  it("an agent's writes land in the real workdir, under the normalized start path", async () => {
    const id = await submit("write:agent-out.txt=written by the agent\ncomplete:wrote", {
      path: "sub/./inner/.."
    })
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(done).toMatchObject({ status: "succeeded", relative_cwd: "sub" })
    expect(fs.readFileSync(`${stack.tree.root}/sub/agent-out.txt`, "utf8")).toBe("written by the agent")
    const read = await ok(stack.client, "read_text_file", { workdir: "main", path: "sub/agent-out.txt" })
    expect(read.content).toBe("written by the agent")
    expect((await events(id)).find((e) => e.event_type === "file_change.started")?.payload).toEqual({
      path: "agent-out.txt"
    })
  })

  it("host paths in what the agent says, asks and answers reach the client redacted", async () => {
    const root = stack.tree.root
    const id = await submit(
      `say:editing ${root}/src/app.ts\napproval:cat ${root}/notes.txt\ncomplete:done in ${root}/src`
    )
    const waiting = await waitForStatus(stack.client, id, ["waiting_for_approval"])
    expect(pendingOf(waiting).payload.command_display).toBe("cat <workdir>/notes.txt")
    await ok(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: pendingOf(waiting).request_id,
      decision: "approve_once"
    })
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(done).toMatchObject({ status: "succeeded", final_response: "done in <workdir>/src" })
    const said = (await events(id)).find((e) => e.event_type === "agent.message")
    expect(said?.payload).toEqual({ text: "editing <workdir>/src/app.ts" })
  })
})

describe("approvals", () => {
  const approvalTask = async () => {
    const id = await submit("approval:make build")
    const view = await waitForStatus(stack.client, id, ["waiting_for_approval"])
    const pending = pendingOf(view)
    expect(view.pending_request_id).toBe(pending.request_id)
    expect(pending).toMatchObject({
      task_id: id,
      kind: "approval",
      status: "pending",
      payload: {
        category: "command",
        title: "Run a command",
        command_display: "make build",
        available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"]
      },
      resolved_at: null,
      resolution: null
    })
    // The request was exposed as an event too.
    const requested = (await events(id)).find((e) => e.event_type === "approval.requested")
    expect(requested?.payload.request_id).toBe(pending.request_id)
    return { id, requestId: pending.request_id }
  }

  for (const decision of ["approve_once", "approve_session", "deny"] as const) {
    it(`${decision}: resolves the request and the task resumes to its end`, async () => {
      const { id, requestId } = await approvalTask()
      const resolved = await ok(stack.client, "respond_agent_approval", {
        task_id: id,
        request_id: requestId,
        decision
      })
      expect(resolved).toEqual({ task_id: id, request_id: requestId, resolved: true, correlation_id: null })
      const done = await waitForEnd(stack.client, id, ["succeeded", "failed", "interrupted"])
      expect(done).toMatchObject({ status: "succeeded", final_response: `approval=${decision}` })
      expect(done).not.toHaveProperty("pending_request")
      const resolvedEvent = (await events(id)).find((e) => e.event_type === "approval.resolved")
      expect(resolvedEvent?.payload).toEqual({ decision })
      // Answering again is refused: the resolution is compare-and-set.
      const again = await fails(stack.client, "respond_agent_approval", {
        task_id: id,
        request_id: requestId,
        decision: "deny"
      })
      expect(again.code).toBe("REQUEST_ALREADY_RESOLVED")
    })
  }

  it("cancel_task: the task is cancelled before the call returns", async () => {
    const { id, requestId } = await approvalTask()
    const resolved = await ok(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: requestId,
      decision: "cancel_task"
    })
    expect(resolved.resolved).toBe(true)
    expect((await task(id)).status).toBe("cancelled")
    const list = types(await events(id))
    expect(list.filter((t) => t === "task.cancelled")).toHaveLength(1)
    expect(list).toContain("approval.resolved")
  })

  it("a permission request grants only what was asked", async () => {
    const id = await submit("permission:net,fs")
    const view = await waitForStatus(stack.client, id, ["waiting_for_approval"])
    const pending = pendingOf(view)
    expect(pending.payload.category).toBe("provider_permission")
    expect(
      (pending.payload.requested_permissions as Array<{ permission_id: string }>).map((p) => p.permission_id)
    ).toEqual(["net", "fs"])
    const outside = await fails(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: pending.request_id,
      decision: "approve_once",
      granted_permission_ids: ["root"]
    })
    expect(outside.code).toBe("PERMISSION_OUTSIDE_POLICY")
    const unknownDecision = await fails(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: pending.request_id,
      decision: "approve_forever"
    })
    expect(unknownDecision.code).toBe("INVALID_ARGUMENT")
    expect(unknownDecision.text).toContain("decision")
    await ok(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: pending.request_id,
      decision: "approve_once",
      granted_permission_ids: ["net"]
    })
    expect((await waitForEnd(stack.client, id, ["succeeded"])).final_response).toBe(
      "permission=approve_once granted=net"
    )
  })
})

describe("questions", () => {
  const questionTask = async (prompt: string) => {
    const id = await submit(prompt)
    const view = await waitForStatus(stack.client, id, ["waiting_for_question"])
    const pending = pendingOf(view)
    expect(pending.kind).toBe("question")
    expect((await events(id)).find((e) => e.event_type === "question.requested")?.payload.request_id).toBe(
      pending.request_id
    )
    return { id, requestId: pending.request_id, payload: pending.payload }
  }

  const answer = (id: string, requestId: string, answers: ReadonlyArray<Record<string, unknown>>) =>
    ok(stack.client, "answer_agent_question", { task_id: id, request_id: requestId, answers })

  it("single choice: one option; two are refused", async () => {
    const { id, requestId, payload } = await questionTask("question:Which one?")
    expect(payload).toEqual({
      questions: [
        {
          question_id: "q1",
          prompt: "Which one?",
          options: [
            { option_id: "a", label: "Option A" },
            { option_id: "b", label: "Option B", description: "the other one" }
          ],
          multi_select: false,
          allow_free_text: true
        }
      ]
    })
    const two = await fails(stack.client, "answer_agent_question", {
      task_id: id,
      request_id: requestId,
      answers: [{ question_id: "q1", selected_option_ids: ["a", "b"] }]
    })
    expect(two.code).toBe("INVALID_QUESTION_ANSWER")
    const unknown = await fails(stack.client, "answer_agent_question", {
      task_id: id,
      request_id: requestId,
      answers: [{ question_id: "q9", selected_option_ids: ["a"] }]
    })
    expect(unknown.code).toBe("INVALID_QUESTION_ANSWER")
    expect(await answer(id, requestId, [{ question_id: "q1", selected_option_ids: ["b"] }])).toEqual({
      task_id: id,
      request_id: requestId,
      resolved: true,
      correlation_id: null
    })
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(JSON.parse(done.final_response as string)).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: ["b"] }]
    })
    expect((await events(id)).find((e) => e.event_type === "question.answered")?.payload).toEqual({
      question_count: 1
    })
    const again = await fails(stack.client, "answer_agent_question", {
      task_id: id,
      request_id: requestId,
      answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
    })
    expect(again.code).toBe("REQUEST_ALREADY_RESOLVED")
  })

  it("multiple choice: several options", async () => {
    const { id, requestId, payload } = await questionTask("multi-question:Which ones?")
    expect((payload.questions as Array<{ multi_select: boolean }>)[0]?.multi_select).toBe(true)
    await answer(id, requestId, [{ question_id: "q1", selected_option_ids: ["a", "b"] }])
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(JSON.parse(done.final_response as string)).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: ["a", "b"] }]
    })
  })

  it("free text: no option, just the text", async () => {
    const { id, requestId } = await questionTask("question:Anything to add?")
    const empty = await fails(stack.client, "answer_agent_question", {
      task_id: id,
      request_id: requestId,
      answers: [{ question_id: "q1" }]
    })
    expect(empty.code).toBe("INVALID_QUESTION_ANSWER")
    await answer(id, requestId, [{ question_id: "q1", text: SECRET.answer }])
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(JSON.parse(done.final_response as string)).toEqual({
      answers: [{ question_id: "q1", selected_option_ids: [], text: SECRET.answer }]
    })
  })

  it("an answer to an approval (or the reverse) is refused", async () => {
    const { id, requestId } = await questionTask("question:Which one?")
    const wrongKind = await fails(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: requestId,
      decision: "approve_once"
    })
    expect(wrongKind.code).toBe("INVALID_APPROVAL_DECISION")
    const missing = await fails(stack.client, "answer_agent_question", {
      task_id: id,
      request_id: "req_000000000000000000000000",
      answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
    })
    expect(missing.code).toBe("REQUEST_NOT_FOUND")
  })
})

describe("steering and cancellation", () => {
  it("send_agent_message steers the running turn; after the end it points to continue_from_task_id", async () => {
    const id = await submit("say:ready\nsteer:", { correlation_id: "corr-steer" })
    await ready(id)
    const sent = await ok(stack.client, "send_agent_message", { task_id: id, message: SECRET.steer })
    expect(sent).toEqual({ task_id: id, accepted: true, correlation_id: "corr-steer" })
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    expect(done).toMatchObject({ status: "succeeded", final_response: `steered=${SECRET.steer}` })
    expect((await events(id)).find((e) => e.event_type === "user.message")?.payload).toEqual({
      bytes: Buffer.byteLength(SECRET.steer)
    })
    const late = await fails(stack.client, "send_agent_message", { task_id: id, message: "more" })
    expect(late.code).toBe("AGENT_TASK_TERMINAL")
    expect(late.text).toContain("continue_from_task_id")
  })

  it("cancel: cancelled at once; repeating it changes nothing", async () => {
    const id = await submit("say:ready\nwait:", { correlation_id: "corr-cancel" })
    await ready(id)
    const first = await ok(stack.client, "cancel_agent_task", { task_id: id })
    expect(first).toEqual({ task_id: id, status: "cancelled", correlation_id: "corr-cancel" })
    const after = await task(id)
    expect(after.status).toBe("cancelled")
    const eventsAfterFirst = await events(id)
    const second = await ok(stack.client, "cancel_agent_task", { task_id: id })
    expect(second).toEqual(first)
    const third = await ok(stack.client, "cancel_agent_task", { task_id: id })
    expect(third).toEqual(first)
    const again = await task(id)
    expect(again.status).toBe("cancelled")
    expect(again.completed_at).toBe(after.completed_at)
    const list = await events(id)
    expect(list.filter((e) => e.event_type === "task.cancelled")).toHaveLength(1)
    // Nothing new was appended by the repeats.
    expect(list).toEqual(eventsAfterFirst)
  })

  it("cancelling a finished task returns its status and changes nothing", async () => {
    const id = await submit("complete:finished")
    await waitForEnd(stack.client, id, ["succeeded"])
    const before = await events(id)
    expect(await ok(stack.client, "cancel_agent_task", { task_id: id })).toMatchObject({
      task_id: id,
      status: "succeeded"
    })
    expect((await task(id)).status).toBe("succeeded")
    expect(await events(id)).toEqual(before)
  })

  it("an answer to a cancelled task's request is stale", async () => {
    const id = await submit("approval:rm -rf build")
    const view = await waitForStatus(stack.client, id, ["waiting_for_approval"])
    await ok(stack.client, "cancel_agent_task", { task_id: id })
    const late = await fails(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: pendingOf(view).request_id,
      decision: "approve_once"
    })
    expect(late.code).toBe("REQUEST_STALE")
  })
})

describe("idempotency and continuation", () => {
  it("the same idempotency_key and request return the same task; another request with it is refused", async () => {
    const args = { prompt: "complete:once", idempotency_key: `key-${MARK}` }
    const first = await submit(args.prompt, { idempotency_key: args.idempotency_key })
    const second = await ok(stack.client, "submit_agent_task", { runtime: "fake", workdir: "main", ...args })
    expect(second.task_id).toBe(first)
    expect(second.idempotency_key).toBe(args.idempotency_key)
    await waitForEnd(stack.client, first, ["succeeded"])
    const third = await ok(stack.client, "submit_agent_task", { runtime: "fake", workdir: "main", ...args })
    expect(third).toMatchObject({ task_id: first, status: "succeeded" })
    const conflict = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "complete:twice",
      idempotency_key: args.idempotency_key
    })
    expect(conflict.code).toBe("AGENT_IDEMPOTENCY_CONFLICT")
    // It ran once.
    expect(types(await events(first)).filter((t) => t === "task.started")).toHaveLength(1)
  })

  it("continue_from_task_id resumes the provider session in a new task; an unfinished one cannot be continued", async () => {
    const first = await submit("complete:first")
    await waitForEnd(stack.client, first, ["succeeded"])
    const next = await submit("complete:second", { continue_from_task_id: first })
    const done = await waitForEnd(stack.client, next, ["succeeded"])
    expect(done).toMatchObject({ continue_from_task_id: first, final_response: "second" })
    expect((done.manifest as { continuation: unknown }).continuation).toEqual({ from_task_id: first })
    expect((await events(next)).find((e) => e.event_type === "turn.started")?.payload).toEqual({
      continued: true
    })
    const running = await submit("say:ready\nwait:", { profile: "review" })
    await ready(running)
    const unfinished = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "complete:x",
      continue_from_task_id: running
    })
    expect(unfinished.code).toBe("AGENT_SESSION_NOT_RESUMABLE")
    const unknown = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "complete:x",
      continue_from_task_id: "agt_000000000000000000000000"
    })
    expect(unknown.code).toBe("AGENT_TASK_NOT_FOUND")
  })
})

describe("the workdir lease", () => {
  it("a workspace-write task makes MCP mutations WORKDIR_BUSY with nothing written, until it ends", async () => {
    const before = await ok(stack.client, "stat_file", { workdir: "main", path: "notes.txt" })
    const id = await submit("say:ready\nwait:")
    await ready(id)
    const busy = "WORKDIR_BUSY: main has an active Agent writer"
    expect(
      (await fails(stack.client, "create_text_file", { workdir: "main", path: "new.txt", content: "x" })).text
    ).toBe(busy)
    expect(
      (
        await fails(stack.client, "edit_text_file", {
          workdir: "main",
          path: "notes.txt",
          expected_revision: before.revision,
          edits: [{ old_text: "one", new_text: "two" }]
        })
      ).text
    ).toBe(busy)
    expect(
      (
        await fails(stack.client, "delete_file", {
          workdir: "main",
          path: "notes.txt",
          expected_revision: before.revision
        })
      ).text
    ).toBe(busy)
    expect((await fails(stack.client, "create_directory", { workdir: "main", path: "newdir" })).text).toBe(
      busy
    )
    // Nothing was written; reads still work.
    expect(fs.existsSync(`${stack.tree.root}/new.txt`)).toBe(false)
    expect(fs.existsSync(`${stack.tree.root}/newdir`)).toBe(false)
    expect(fs.readFileSync(`${stack.tree.root}/notes.txt`, "utf8")).toBe("version one\n")
    expect((await ok(stack.client, "stat_file", { workdir: "main", path: "notes.txt" })).revision).toBe(
      before.revision
    )
    // A second workspace-write task is refused by the bridge, verbatim.
    const second = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "complete:second writer"
    })
    expect(second.text).toBe(busy)

    await ok(stack.client, "cancel_agent_task", { task_id: id })
    // The lease is released by the task's background cleanup: accepted again once it is.
    const created = await eventually("create_text_file accepted", async () => {
      const result = await call(stack.client, "create_text_file", {
        workdir: "main",
        path: "new.txt",
        content: "after the task\n"
      })
      return result.isError === true ? undefined : result.structuredContent
    })
    expect(created).toMatchObject({ created: true })
    const edited = await ok(stack.client, "edit_text_file", {
      workdir: "main",
      path: "notes.txt",
      expected_revision: before.revision,
      edits: [{ old_text: "one", new_text: "two" }]
    })
    expect(fs.readFileSync(`${stack.tree.root}/notes.txt`, "utf8")).toBe("version two\n")
    await ok(stack.client, "delete_file", {
      workdir: "main",
      path: "new.txt",
      expected_revision: created.revision
    })
    expect(edited.revision).not.toBe(before.revision)
  })

  it("a review task holds no lease: mutations and a workspace-write task proceed beside it", async () => {
    const review = await submit("say:ready\nwait:", { profile: "review" })
    await ready(review)
    const created = await ok(stack.client, "create_text_file", {
      workdir: "main",
      path: "beside-review.txt",
      content: "ok\n"
    })
    await ok(stack.client, "delete_file", {
      workdir: "main",
      path: "beside-review.txt",
      expected_revision: created.revision
    })
    const writer = await submit("complete:writer")
    expect((await waitForEnd(stack.client, writer, ["succeeded", "failed"])).status).toBe("succeeded")
  })
})

describe("large results", () => {
  it("a spooled result reads back byte-exact, chunk by chunk, with the task's sha256", async () => {
    const size = 300_000
    const id = await submit(`large:${size}`, { correlation_id: "corr-large" })
    const done = await waitForEnd(stack.client, id, ["succeeded", "failed"])
    const expected = Buffer.from(largeText(size), "utf8")
    expect(expected.length).toBe(size)
    expect(done).toMatchObject({
      status: "succeeded",
      final_response_truncated: true,
      result: { storage: "spool", size_bytes: size, sha256: sha256(expected), retrievable: true }
    })
    // The preview is a whole-character prefix of at most 64 KiB.
    const preview = Buffer.from(done.final_response as string, "utf8")
    expect(preview.length).toBeLessThanOrEqual(65_536)
    expect(preview.length).toBeGreaterThan(65_530)
    expect(expected.subarray(0, preview.length).equals(preview)).toBe(true)
    expect((await events(id)).find((e) => e.event_type === "task.result_spooled")?.payload).toEqual({
      size_bytes: size,
      sha256: sha256(expected)
    })

    for (const maxBytes of [65_536, 40_001]) {
      const chunks: Buffer[] = []
      let offset = 0
      for (;;) {
        const chunk = await ok(stack.client, "read_agent_task_result", {
          task_id: id,
          offset_bytes: offset,
          max_bytes: maxBytes
        })
        const bytes = Buffer.from(chunk.text as string, "utf8")
        expect(chunk.offset_bytes).toBe(offset)
        expect(chunk.correlation_id).toBe("corr-large")
        expect(bytes.length).toBeLessThanOrEqual(maxBytes)
        expect(chunk.next_offset_bytes).toBe(offset + bytes.length)
        chunks.push(bytes)
        offset = chunk.next_offset_bytes as number
        if (chunk.eof === true) break
        expect(bytes.length).toBeGreaterThan(0)
      }
      const whole = Buffer.concat(chunks)
      expect(whole.length).toBe(size)
      expect(whole.equals(expected)).toBe(true)
      expect(sha256(whole)).toBe((done.result as { sha256: string }).sha256)
    }

    // An offset inside a character, or past the end, is refused.
    expect((await fails(stack.client, "read_agent_task_result", { task_id: id, offset_bytes: 2 })).code).toBe(
      "INVALID_RESULT_OFFSET"
    )
    expect(
      (await fails(stack.client, "read_agent_task_result", { task_id: id, offset_bytes: size + 1 })).code
    ).toBe("INVALID_RESULT_OFFSET")
    // An inline result has nothing to read here.
    const inline = await submit("complete:small")
    await waitForEnd(stack.client, inline, ["succeeded"])
    expect((await fails(stack.client, "read_agent_task_result", { task_id: inline })).code).toBe(
      "AGENT_RESULT_NOT_RETRIEVABLE"
    )
  })
})

describe("audit and confidentiality", () => {
  it("audit lines carry the §7 metadata of each agent tool", async () => {
    const id = await submit("approval:make\nquestion:Which one?\nsay:ready\nsteer:\nlarge:270000", {
      path: "sub/./inner/..",
      correlation_id: "corr-audit",
      idempotency_key: `audit-${MARK}`,
      profile: "review"
    })
    const approval = await waitForStatus(stack.client, id, ["waiting_for_approval"])
    const approvalId = pendingOf(approval).request_id
    await ok(stack.client, "respond_agent_approval", {
      task_id: id,
      request_id: approvalId,
      decision: "deny"
    })
    const question = await waitForStatus(stack.client, id, ["waiting_for_question"])
    const questionId = pendingOf(question).request_id
    await ok(stack.client, "answer_agent_question", {
      task_id: id,
      request_id: questionId,
      answers: [{ question_id: "q1", text: SECRET.answer }]
    })
    await ready(id)
    await ok(stack.client, "send_agent_message", { task_id: id, message: `${SECRET.steer}-é` })
    await waitForEnd(stack.client, id, ["succeeded"])
    await ok(stack.client, "read_agent_task_result", { task_id: id, offset_bytes: 6, max_bytes: 1000 })
    await ok(stack.client, "cancel_agent_task", { task_id: id })
    // The last call's line arrives last (one stderr stream): once it is here, all are.
    await auditArrived(stack, "cancel_agent_task", (l) => l.task_id === id)

    const submitLine = auditOf(stack, "submit_agent_task").find((l) => l.task_id === id)
    expect(submitLine).toMatchObject({
      level: "INFO",
      success: true,
      workdir: "main",
      path: "sub",
      runtime: "fake",
      profile: "review",
      correlation_id: "corr-audit",
      idempotency_key: `audit-${MARK}`,
      task_id: id,
      status: "queued"
    })
    expect(typeof submitLine?.duration_ms).toBe("number")
    expect(auditOf(stack, "respond_agent_approval").find((l) => l.task_id === id)).toMatchObject({
      success: true,
      task_id: id,
      request_id: approvalId,
      decision: "deny",
      correlation_id: "corr-audit"
    })
    expect(auditOf(stack, "answer_agent_question").find((l) => l.task_id === id)).toMatchObject({
      success: true,
      task_id: id,
      request_id: questionId,
      answer_count: 1
    })
    expect(auditOf(stack, "send_agent_message").find((l) => l.task_id === id)).toMatchObject({
      success: true,
      task_id: id,
      message_bytes: Buffer.byteLength(`${SECRET.steer}-é`)
    })
    expect(auditOf(stack, "read_agent_task_result").find((l) => l.task_id === id)).toMatchObject({
      success: true,
      task_id: id,
      offset_bytes: 6,
      max_bytes: 1000
    })
    for (const tool of ["get_agent_task", "read_agent_task_events", "cancel_agent_task"]) {
      expect(
        auditOf(stack, tool).some((l) => l.task_id === id && l.success === true),
        tool
      ).toBe(true)
    }
    // Failures are audited with their code.
    await fails(stack.client, "get_agent_task", { task_id: "agt_000000000000000000000000" })
    await auditArrived(stack, "get_agent_task", (l) => l.error_code === "AGENT_TASK_NOT_FOUND")
    expect(auditOf(stack, "get_agent_task").at(-1)).toMatchObject({
      success: false,
      error_code: "AGENT_TASK_NOT_FOUND"
    })
  })

  it("prompts, answers, steering and results never reach either process's stderr", async () => {
    // They did travel: the client saw the result, the answer and the steering echoed back.
    const seen = stack.received().join("\n")
    for (const secret of [SECRET.prompt, SECRET.result, SECRET.answer, SECRET.steer]) {
      expect(seen).toContain(secret)
    }
    expectNotLogged(stack, [SECRET.prompt, SECRET.result, SECRET.answer, SECRET.steer, "aé€aé€"])
  })

  it("no host path in anything the client received", () => {
    expect(stack.received().length).toBeGreaterThan(100)
    expectNoHostPath(stack)
  })
})
