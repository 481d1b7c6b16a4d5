/**
 * The mandatory AskUserQuestion round trip of spec v0.3 §18 on the real CLI: Claude's questions
 * become one ServerFS question (single choice, multi-select, free text), and the human's answers
 * are what the model's NEXT request contains.
 */
import { askReply, lastToolResults, messageTexts, textReply } from "@serverfs/testkit"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type ClaudeFixture, expectSuccess, makeRecording, runTurn, startClaudeFixture } from "./support.js"

let fx: ClaudeFixture

beforeAll(async () => {
  fx = await startClaudeFixture()
})

beforeEach(() => {
  fx.server.clear()
})

afterAll(async () => {
  await fx?.close()
})

describe("Claude adapter: AskUserQuestion", () => {
  it("relays the questions and returns the answers the model then sees", async () => {
    fx.server.queue([
      askReply([
        {
          question: "Which database should we use?",
          header: "Database",
          options: [
            { label: "SQLite", description: "embedded" },
            { label: "Postgres", description: "a server" }
          ],
          multiSelect: false
        },
        {
          question: "Which features do you want?",
          header: "Features",
          options: [
            { label: "Auth", description: "log in" },
            { label: "Logging", description: "audit" },
            { label: "Search", description: "full text" }
          ],
          multiSelect: true
        },
        {
          question: "Anything else?",
          header: "Notes",
          options: [
            { label: "No", description: "nothing" },
            { label: "Yes", description: "I will say" }
          ],
          multiSelect: false
        }
      ]),
      textReply("Thanks, noted.")
    ])
    const rec = makeRecording({
      question: () =>
        Effect.succeed({
          answers: [
            { question_id: "q0", selected_option_ids: ["SQLite"] },
            { question_id: "q1", selected_option_ids: ["Auth", "Logging"], text: "and metrics" },
            { question_id: "q2", selected_option_ids: [], text: "keep it small" }
          ]
        })
    })
    expect(expectSuccess(await runTurn(fx.adapter, fx.request("plan the app"), rec))).toBe("Thanks, noted.")
    expect(rec.approvals).toEqual([])
    expect(rec.questions).toEqual([
      {
        questions: [
          {
            question_id: "q0",
            prompt: "Which database should we use?",
            options: [
              { option_id: "SQLite", label: "SQLite", description: "embedded" },
              { option_id: "Postgres", label: "Postgres", description: "a server" }
            ],
            multi_select: false,
            allow_free_text: true
          },
          {
            question_id: "q1",
            prompt: "Which features do you want?",
            options: [
              { option_id: "Auth", label: "Auth", description: "log in" },
              { option_id: "Logging", label: "Logging", description: "audit" },
              { option_id: "Search", label: "Search", description: "full text" }
            ],
            multi_select: true,
            allow_free_text: true
          },
          {
            question_id: "q2",
            prompt: "Anything else?",
            options: [
              { option_id: "No", label: "No", description: "nothing" },
              { option_id: "Yes", label: "Yes", description: "I will say" }
            ],
            multi_select: false,
            allow_free_text: true
          }
        ]
      }
    ])
    // The gate: the model's next request carries every answer.
    const requests = fx.server.modelRequests()
    expect(requests).toHaveLength(2)
    const [result] = requests[1] === undefined ? [] : lastToolResults(requests[1])
    expect(result?.isError).toBe(false)
    expect(result?.text).toContain('"Which database should we use?"="SQLite"')
    expect(result?.text).toContain('"Which features do you want?"="Auth, Logging, and metrics"')
    expect(result?.text).toContain('"Anything else?"="keep it small"')
    // …and the first one did not (they came from the human, not from the prompt).
    expect(
      messageTexts(requests[0] ?? { method: "", path: "", headers: {}, body: undefined }).join("\n")
    ).not.toContain("and metrics")
  })
})
