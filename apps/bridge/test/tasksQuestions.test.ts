/**
 * The task API of a running daemon (see tasks.test.ts): questions — single and multiple choice,
 * free text, invalid answers, concurrent answers and approval responses.
 */
import { describe, expect, it } from "vitest"
import {
  allEvents,
  callCode,
  callError,
  eventTypes,
  getTask,
  rawCall,
  TERMINAL,
  waitForStatus
} from "./support/daemon.js"
import { useTaskBridge } from "./support/taskApi.js"

const t = useTaskBridge()
const { c, cancel, untilPending, answer, answerCode } = t

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
    const raw = await rawCall(t.sandbox().socketPath, {
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

t.checkDaemonOutput()
