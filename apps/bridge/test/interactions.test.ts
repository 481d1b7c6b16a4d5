/**
 * Interaction shapes the scripted runtime never produces, through the real RPC server and client
 * (in this process, with an adapter written here): decisions not offered, questions without free
 * text, an empty decision list, a provider that withdraws its request, an oversized request and a
 * provider without live steering (bridge-internals §4/§7, spec v0.3 §13.5–§13.7, §17).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { ProviderAdapter } from "@serverfs/adapters"
import { AgentProviderError } from "@serverfs/domain"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  call,
  callError,
  eventTypes,
  makeSandbox,
  type Sandbox,
  submitParams,
  TERMINAL,
  waitForEvent,
  waitForStatus
} from "./support/daemon.js"
import { type InProcessServer, serveInProcess } from "./support/inProcess.js"

const providerError = (message: string) => new AgentProviderError({ message })

/** A provider with Codex/Claude-like interaction shapes, chosen by the prompt. */
const adapter: ProviderAdapter = {
  name: "fake",
  inFlightRecovery: "none",
  probe: () => Effect.succeed({ name: "fake", available: true, version: "strict-1", live_steer: false }),
  run: (request, sink) =>
    Effect.gen(function* () {
      yield* sink.nativeIds({ sessionId: `strict-${request.taskId}` })
      yield* sink.event("turn.started", {})
      switch (request.prompt) {
        case "offer-two": {
          const answer = yield* sink.requestApproval({
            category: "file_change",
            title: "Apply a patch",
            file_changes: [{ path: `${request.workdirRoot}/src/a.ts` }, { path: "/etc/hosts" }],
            available_decisions: ["approve_once", "deny"]
          })
          return { finalText: `decision=${answer.decision}` }
        }
        case "offer-none": {
          const answer = yield* sink.requestApproval({
            category: "other",
            title: "Anything",
            available_decisions: []
          })
          return { finalText: `decision=${answer.decision}` }
        }
        case "strict-question": {
          const answer = yield* sink.requestQuestion({
            questions: [
              {
                question_id: "color",
                prompt: "Color?",
                options: [
                  { option_id: "red", label: "Red" },
                  { option_id: "blue", label: "Blue" }
                ],
                multi_select: false,
                allow_free_text: false
              },
              {
                question_id: "sizes",
                prompt: "Sizes?",
                options: [
                  { option_id: "s", label: "S" },
                  { option_id: "m", label: "M" }
                ],
                multi_select: true,
                allow_free_text: false
              }
            ]
          })
          return { finalText: JSON.stringify(answer) }
        }
        case "withdraw": {
          // The provider clears its own request (Codex serverRequest/resolved) before anyone answers.
          const answered = yield* Effect.timeout(
            sink.requestApproval({ category: "command", title: "Soon gone", available_decisions: [] }),
            "300 millis"
          ).pipe(Effect.option)
          return { finalText: answered._tag === "None" ? "withdrawn" : "answered" }
        }
        case "huge-request": {
          yield* sink.requestApproval({
            category: "command",
            title: "x".repeat(70_000),
            available_decisions: []
          })
          return { finalText: "unreachable" }
        }
        case "wait":
          return yield* Effect.never
        default:
          return { finalText: "ok" }
      }
    }).pipe(Effect.catchTag("InteractionEnded", () => Effect.fail(providerError("ended")))),
  steer: () => Effect.fail(providerError("live steer is not enabled")),
  cancel: () => Effect.void,
  reconcile: () => Effect.succeed({ status: "NOT_RECOVERABLE", providerActive: false, detail: "in-process" }),
  close: () => Effect.void
}

let sandbox: Sandbox
let server: InProcessServer

beforeAll(async () => {
  sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
  fs.mkdirSync(path.dirname(sandbox.socketPath), { recursive: true, mode: 0o700 })
  server = await serveInProcess(sandbox.env(), sandbox.socketPath, [adapter])
}, 60_000)

afterAll(async () => {
  await server?.close()
  sandbox?.remove()
})

const c = () => server.client
const submit = (prompt: string) => call(c(), "task.submit", submitParams({ prompt }, "w1"))

const pendingOf = async (prompt: string, status: "waiting_for_approval" | "waiting_for_question") => {
  const { task_id } = await submit(prompt)
  const view = await waitForStatus(c(), task_id, status)
  if (view.pending_request === undefined) throw new Error("no pending request")
  return { taskId: task_id, pending: view.pending_request }
}

describe("approvals", () => {
  it("a decision the provider did not offer is INVALID_APPROVAL_DECISION; an offered one goes through", async () => {
    const { taskId, pending } = await pendingOf("offer-two", "waiting_for_approval")
    expect(pending.payload).toMatchObject({
      available_decisions: ["approve_once", "deny"],
      file_changes: [{ path: "src/a.ts" }, { path: "<outside-workdir>" }]
    })
    for (const decision of ["approve_session", "cancel_task"]) {
      const e = await callError(c(), "task.approval.respond", {
        task_id: taskId,
        request_id: pending.request_id,
        decision
      })
      expect(e.code, decision).toBe("INVALID_APPROVAL_DECISION")
    }
    expect((await waitForStatus(c(), taskId, "waiting_for_approval")).status).toBe("waiting_for_approval")
    await call(c(), "task.approval.respond", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "deny"
    })
    expect((await waitForStatus(c(), taskId, TERMINAL)).final_response).toBe("decision=deny")
  })

  it("an empty decision list does not restrict decisions", async () => {
    const { taskId, pending } = await pendingOf("offer-none", "waiting_for_approval")
    await call(c(), "task.approval.respond", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_session"
    })
    expect((await waitForStatus(c(), taskId, TERMINAL)).final_response).toBe("decision=approve_session")
  })

  it("a request the provider withdraws becomes stale (interaction.stale); a late answer is REQUEST_STALE", async () => {
    const { task_id } = await submit("withdraw")
    const events = await waitForEvent(c(), task_id, "interaction.stale")
    const requested = events.find((e) => e.event_type === "approval.requested")
    const requestId = requested?.payload.request_id as string
    expect(events.find((e) => e.event_type === "interaction.stale")?.payload).toEqual({
      request_id: requestId
    })
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("withdrawn")
    const late = await callError(c(), "task.approval.respond", {
      task_id,
      request_id: requestId,
      decision: "approve_once"
    })
    expect(late.code).toBe("REQUEST_STALE")
  })

  it("a request over the interaction limit fails the task with AGENT_INTERACTION_TOO_LARGE, never shown", async () => {
    const { task_id } = await submit("huge-request")
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.status).toBe("failed")
    expect(done.error_code).toBe("AGENT_INTERACTION_TOO_LARGE")
    const types = eventTypes(await allEvents(c(), task_id))
    expect(types).not.toContain("approval.requested")
    expect(types.filter((t) => t === "task.failed")).toHaveLength(1)
  })
})

describe("questions without free text", () => {
  it("text where it is not allowed is INVALID_QUESTION_ANSWER; every question must be answered", async () => {
    const { taskId, pending } = await pendingOf("strict-question", "waiting_for_question")
    const invalid: ReadonlyArray<readonly [string, ReadonlyArray<Record<string, unknown>>]> = [
      [
        "text on a question without free text",
        [
          { question_id: "color", selected_option_ids: ["red"], text: "crimson" },
          { question_id: "sizes", selected_option_ids: ["s"] }
        ]
      ],
      [
        "text alone",
        [
          { question_id: "color", selected_option_ids: [], text: "red" },
          { question_id: "sizes", selected_option_ids: ["s"] }
        ]
      ],
      ["one of two questions", [{ question_id: "color", selected_option_ids: ["red"] }]],
      [
        "two options on the single-select one",
        [
          { question_id: "color", selected_option_ids: ["red", "blue"] },
          { question_id: "sizes", selected_option_ids: ["s"] }
        ]
      ],
      [
        "an option of the other question",
        [
          { question_id: "color", selected_option_ids: ["s"] },
          { question_id: "sizes", selected_option_ids: ["m"] }
        ]
      ]
    ]
    for (const [name, answers] of invalid) {
      const e = await callError(c(), "task.question.answer", {
        task_id: taskId,
        request_id: pending.request_id,
        answers: answers as never
      })
      expect(e.code, name).toBe("INVALID_QUESTION_ANSWER")
    }
    await call(c(), "task.question.answer", {
      task_id: taskId,
      request_id: pending.request_id,
      answers: [
        { question_id: "sizes", selected_option_ids: ["m", "s"] },
        { question_id: "color", selected_option_ids: ["blue"] }
      ]
    })
    const done = await waitForStatus(c(), taskId, TERMINAL)
    expect(JSON.parse(done.final_response ?? "")).toEqual({
      answers: [
        { question_id: "sizes", selected_option_ids: ["m", "s"] },
        { question_id: "color", selected_option_ids: ["blue"] }
      ]
    })
    const answered = (await allEvents(c(), taskId)).find((e) => e.event_type === "question.answered")
    expect(answered?.payload).toEqual({ question_count: 2 })
  })
})

describe("steering", () => {
  it("a provider without live steering answers AGENT_PROVIDER_ERROR; the task keeps running", async () => {
    const { task_id } = await submit("wait")
    await waitForStatus(c(), task_id, "running")
    await waitForEvent(c(), task_id, "turn.started")
    const e = await callError(c(), "task.message.send", { task_id, message: "change course" })
    expect(e.code).toBe("AGENT_PROVIDER_ERROR")
    expect((await waitForStatus(c(), task_id, "running")).status).toBe("running")
    expect(eventTypes(await allEvents(c(), task_id))).not.toContain("user.message")
    expect(await call(c(), "task.cancel", { task_id })).toMatchObject({ status: "cancelled" })
  })
})
