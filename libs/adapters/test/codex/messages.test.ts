/**
 * Codex's messages decoded at the boundary: the JSON-RPC frame, and the fields of the
 * notifications and server requests the adapter acts on, before they get their protocol type.
 */
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { decodeFrame, isNotification, isResponseTo, isServerRequest } from "../../src/codex/CodexMessages.js"

const turn = {
  id: "tu",
  status: "completed",
  items: [{ type: "agentMessage", id: "m1", text: "hi", phase: null }]
}

describe("Codex frames and messages", () => {
  it("a frame that is not a JSON object is dropped", () => {
    expect(Option.isNone(decodeFrame("not json"))).toBe(true)
    expect(Option.isNone(decodeFrame("[1,2]"))).toBe(true)
    expect(Option.getOrThrow(decodeFrame('{"id":3,"result":{"ok":true}}'))).toEqual({
      id: 3,
      result: { ok: true }
    })
  })

  it("an acted-on notification is typed only when its fields decode", () => {
    expect(isNotification({ method: "turn/completed", params: { threadId: "th", turn } })).toBe(true)
    expect(
      isNotification({ method: "turn/completed", params: { threadId: "th", turn: { ...turn, id: 7 } } })
    ).toBe(false)
    expect(
      isNotification({
        method: "item/completed",
        params: { threadId: "th", turnId: "tu", item: { type: "agentMessage", id: "m1" } }
      })
    ).toBe(false)
    expect(isNotification({ method: "error", params: { threadId: "th", turnId: "tu", error: {} } })).toBe(
      false
    )
    // Not acted on: only the method matters (it is ignored).
    expect(isNotification({ method: "thread/started", params: null })).toBe(true)
  })

  it("a relayed server request without its thread and item is not typed (the adapter declines it)", () => {
    const base = { id: 9, method: "item/fileChange/requestApproval" }
    expect(isServerRequest({ ...base, params: { threadId: "th", itemId: "it" } })).toBe(true)
    expect(isServerRequest({ ...base, params: { threadId: "th" } })).toBe(false)
    expect(
      isServerRequest({ method: "item/fileChange/requestApproval", params: { threadId: "th", itemId: "it" } })
    ).toBe(false)
    expect(
      isServerRequest({
        id: "r1",
        method: "item/tool/requestUserInput",
        params: {
          threadId: "th",
          itemId: "it",
          questions: [{ id: "q", header: "", question: "?", isOther: true }]
        }
      })
    ).toBe(false)
    // Declined by method anyway: only the id is needed.
    expect(isServerRequest({ id: 1, method: "mcpServer/elicitation/request", params: {} })).toBe(true)
  })
})

describe("Codex responses", () => {
  it("a response is typed only when the fields the adapter reads decode", () => {
    expect(isResponseTo("thread/start", { thread: { id: "th" }, model: "m" })).toBe(true)
    expect(isResponseTo("thread/start", { thread: {}, model: "m" })).toBe(false)
    expect(isResponseTo("turn/start", { turn: { id: "tu" } })).toBe(true)
    expect(isResponseTo("turn/start", { turn: null })).toBe(false)
    expect(isResponseTo("thread/read", { thread: { status: { type: "idle" }, turns: [turn] } })).toBe(true)
    expect(isResponseTo("thread/read", { thread: { status: "idle", turns: [] } })).toBe(false)
    // Results the adapter does not read are not checked.
    expect(isResponseTo("turn/interrupt", {})).toBe(true)
  })
})
