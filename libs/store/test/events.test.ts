/**
 * The event log (spec v0.7 §2.1, bridge-internals §3, §6): envelope v1 with the task's
 * correlation_id, one global autoincrement id, gap-free and duplicate-free cursor pages, the
 * per-task cap, and the size rule with the agent.message shrink.
 */
import { describe, expect, it } from "@effect/vitest"
import { canonicalJson, sha256Hex } from "@serverfs/domain"
import { Effect, Either, Option } from "effect"
import { fitEventPayload, TaskStore, utf8Length } from "../src/index.js"
import { eventLimits, failureTag, insertRunning, scopedTempState, withStore } from "./helpers.js"

describe("envelope and ids", () => {
  it.scoped("events carry schema_version 1, the task's correlation_id and one global id sequence", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const a = yield* insertRunning({ correlation_id: "corr-a" })
          const b = yield* insertRunning()
          const ids: Array<number> = []
          for (let i = 0; i < 6; i++) {
            const task = i % 2 === 0 ? a : b
            const event = yield* store.appendEvent(task, "item.completed", { i }, eventLimits)
            expect(event).toMatchObject({
              schema_version: 1,
              task_id: task,
              correlation_id: task === a ? "corr-a" : null,
              event_type: "item.completed",
              payload: { i }
            })
            expect(event.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
            ids.push(event.event_id)
          }
          // One sequence shared by both tasks: strictly increasing by one across them.
          expect(ids).toEqual(ids.map((_, i) => (ids[0] ?? 0) + i))
          const readA = yield* store.readEvents(a, 0, 500)
          expect(readA.map((e) => e.event_id)).toEqual([ids[0], ids[2], ids[4]])
          expect(readA.map((e) => e.payload)).toEqual([{ i: 0 }, { i: 2 }, { i: 4 }])
          expect(readA.every((e) => e.correlation_id === "corr-a" && e.schema_version === 1)).toBe(true)
          const task = Option.getOrThrow(yield* store.getTask(a))
          expect(task.event_count).toBe(3)
        })
      )
    )
  )

  it.scoped("ids are never reused after GC removed the newest events", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const doomed = yield* insertRunning()
          const last = yield* store.appendEvent(doomed, "turn.started", {}, eventLimits)
          yield* store.transition(doomed, "cancelled")
          expect(yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: 1 })).toEqual([doomed])
          const other = yield* insertRunning()
          const next = yield* store.appendEvent(other, "turn.started", {}, eventLimits)
          expect(next.event_id).toBeGreaterThan(last.event_id)
        })
      )
    )
  )
})

describe("cursor pages", () => {
  it.scoped(
    "pages of every size walk the log without gaps or duplicates, interleaved with another task",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const task = yield* insertRunning()
            const noise = yield* insertRunning()
            const written: Array<number> = []
            for (let i = 0; i < 37; i++) {
              written.push(
                (yield* store.appendEvent(task, "agent.message", { text: `m${i}` }, eventLimits)).event_id
              )
              if (i % 3 === 0)
                yield* store.appendEvent(noise, "agent.message", { text: "noise" }, eventLimits)
            }
            for (const limit of [1, 2, 5, 10, 36, 37, 500]) {
              const seen: Array<number> = []
              let cursor = 0
              for (;;) {
                const page = yield* store.readEvents(task, cursor, limit)
                expect(page.length).toBeLessThanOrEqual(limit)
                if (page.length === 0) break
                seen.push(...page.map((e) => e.event_id))
                // The caller's next cursor is the last id of the page.
                cursor = page[page.length - 1]?.event_id ?? cursor
              }
              expect(seen, `limit ${limit}`).toEqual(written)
            }
            // A cursor taken mid-way resumes right after it; one past the end gives an empty page.
            const middle = written[20] ?? 0
            expect((yield* store.readEvents(task, middle, 3)).map((e) => e.event_id)).toEqual(
              written.slice(21, 24)
            )
            expect(yield* store.readEvents(task, written[36] ?? 0, 10)).toEqual([])
          })
        )
      )
  )

  it.scoped(
    "cursor < 0, a fractional cursor, or a limit outside 1..500 → INVALID_LIMIT; unknown task → AGENT_TASK_NOT_FOUND",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const task = yield* insertRunning()
            for (const [after, limit] of [
              [-1, 10],
              [0.5, 10],
              [0, 0],
              [0, 501],
              [0, 1.5]
            ] as const) {
              expect(
                failureTag(yield* Effect.exit(store.readEvents(task, after, limit))),
                `${after}/${limit}`
              ).toBe("INVALID_LIMIT")
            }
            expect(failureTag(yield* Effect.exit(store.readEvents(`agt_${"9".repeat(24)}`, 0, 10)))).toBe(
              "AGENT_TASK_NOT_FOUND"
            )
            expect(
              failureTag(yield* Effect.exit(store.appendEvent(`agt_${"9".repeat(24)}`, "x", {}, eventLimits)))
            ).toBe("AGENT_TASK_NOT_FOUND")
          })
        )
      )
  )
})

describe("limits", () => {
  it.scoped("the per-task cap → AGENT_EVENT_LIMIT_REACHED, counted per task, nothing written", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const limits = { maxEventsPerTask: 3, maxEventBytes: 1024 }
          const task = yield* insertRunning()
          const other = yield* insertRunning()
          for (let i = 0; i < 3; i++) yield* store.appendEvent(task, "turn.started", {}, limits)
          const refused = yield* Effect.exit(store.appendEvent(task, "turn.started", {}, limits))
          expect(failureTag(refused)).toBe("AGENT_EVENT_LIMIT_REACHED")
          expect(yield* store.readEvents(task, 0, 500)).toHaveLength(3)
          expect(Option.map(yield* store.getTask(task), (t) => t.event_count)).toEqual(Option.some(3))
          // Another task has its own budget.
          yield* store.appendEvent(other, "turn.started", {}, limits)
        })
      )
    )
  )

  it.scoped("an oversized event of any other type → AGENT_EVENT_TOO_LARGE, nothing written", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const task = yield* insertRunning()
          const limits = { maxEventsPerTask: 100, maxEventBytes: 200 }
          // Exactly at the limit is fine (the canonical JSON size counts).
          const fits = { command: "x".repeat(200 - utf8Length(canonicalJson({ command: "" }))) }
          expect(utf8Length(canonicalJson(fits))).toBe(200)
          yield* store.appendEvent(task, "command.started", fits, limits)
          for (const type of ["command.started", "item.completed", "provider.error"]) {
            const exit = yield* Effect.exit(
              store.appendEvent(task, type, { command: `${fits.command}y` }, limits)
            )
            expect(failureTag(exit), type).toBe("AGENT_EVENT_TOO_LARGE")
          }
          // agent.message without a string text cannot be shrunk.
          const noText = yield* Effect.exit(
            store.appendEvent(task, "agent.message", { blob: "z".repeat(300) }, limits)
          )
          expect(failureTag(noText)).toBe("AGENT_EVENT_TOO_LARGE")
          expect(yield* store.readEvents(task, 0, 500)).toHaveLength(1)
          expect(Option.map(yield* store.getTask(task), (t) => t.event_count)).toEqual(Option.some(1))
        })
      )
    )
  )

  it.scoped(
    "an oversized agent.message is shrunk to a UTF-8-safe prefix with the full text's size and sha256",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const task = yield* insertRunning()
            const maxEventBytes = 4096
            const text = 'naïve ☃ 😀 "quoted" \\ \n'.repeat(400)
            const event = yield* store.appendEvent(
              task,
              "agent.message",
              { text },
              { maxEventsPerTask: 10, maxEventBytes }
            )
            const payload = event.payload as {
              text: string
              truncated: boolean
              size_bytes: number
              sha256: string
            }
            expect(Object.keys(payload).sort()).toEqual(["sha256", "size_bytes", "text", "truncated"])
            expect(payload.truncated).toBe(true)
            expect(payload.size_bytes).toBe(Buffer.byteLength(text, "utf8"))
            expect(payload.sha256).toBe(sha256Hex(Buffer.from(text, "utf8")))
            expect(text.startsWith(payload.text)).toBe(true)
            expect(payload.text.length).toBeGreaterThan(0)
            expect(payload.text).not.toContain("\uFFFD")
            const stored = canonicalJson(payload)
            expect(utf8Length(stored)).toBeLessThanOrEqual(maxEventBytes)
            // It is the longest prefix that fits: one more character would not.
            const nextChar = [...text.slice(payload.text.length)][0] ?? ""
            expect(utf8Length(canonicalJson({ ...payload, text: payload.text + nextChar }))).toBeGreaterThan(
              maxEventBytes
            )
            const [read] = yield* store.readEvents(task, 0, 10)
            expect(read?.payload).toEqual(payload)
          })
        )
      )
  )
})

describe("fitEventPayload (pure)", () => {
  it("never splits a character, whatever the budget", () => {
    const text = "a😀é☃".repeat(50)
    for (let max = 60; max < 400; max++) {
      const fitted = fitEventPayload("agent.message", { text }, max)
      if (fitted instanceof Error) {
        expect(fitted._tag).toBe("AGENT_EVENT_TOO_LARGE")
        continue
      }
      const prefix = (fitted.payload as { text: string }).text
      expect(text.startsWith(prefix)).toBe(true)
      expect(Buffer.from(prefix, "utf8").toString("utf8")).toBe(prefix)
      expect(utf8Length(fitted.json)).toBeLessThanOrEqual(max)
      expect(fitted.json).toBe(canonicalJson(fitted.payload))
      const next = [...text.slice(prefix.length)][0] ?? ""
      expect(utf8Length(canonicalJson({ ...fitted.payload, text: prefix + next }))).toBeGreaterThan(max)
    }
  })

  it("a budget smaller than the shrunk envelope itself → AGENT_EVENT_TOO_LARGE", () => {
    const fitted = fitEventPayload("agent.message", { text: "x".repeat(100) }, 20)
    expect(fitted instanceof Error && fitted._tag).toBe("AGENT_EVENT_TOO_LARGE")
  })
})

describe("batches (appendEvents)", () => {
  it.scoped(
    "one transaction keeps the given order across tasks; each entry has its own outcome; counts add up",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const limits = { maxEventsPerTask: 3, maxEventBytes: 200 }
            const a = yield* insertRunning()
            const b = yield* insertRunning()
            yield* store.appendEvent(a, "turn.started", {}, limits)
            const missing = `agt_${"9".repeat(24)}`
            const outcomes = yield* store.appendEvents(
              [
                { taskId: a, eventType: "agent.message", payload: { text: "a1" } },
                { taskId: b, eventType: "agent.message", payload: { text: "b1" } },
                { taskId: a, eventType: "command.started", payload: { command: "x".repeat(300) } },
                { taskId: missing, eventType: "agent.message", payload: { text: "?" } },
                { taskId: a, eventType: "agent.message", payload: { text: "a2" } },
                // a has reached 3: refused, while b goes on.
                { taskId: a, eventType: "agent.message", payload: { text: "a3" } },
                { taskId: b, eventType: "agent.message", payload: { text: "b2" } }
              ],
              limits
            )
            expect(outcomes.map((o) => (Either.isLeft(o) ? o.left._tag : "ok"))).toEqual([
              "ok",
              "ok",
              "AGENT_EVENT_TOO_LARGE",
              "AGENT_TASK_NOT_FOUND",
              "ok",
              "AGENT_EVENT_LIMIT_REACHED",
              "ok"
            ])
            const ids = outcomes.flatMap((o) => (Either.isRight(o) ? [o.right] : []))
            expect(ids).toEqual([...ids].sort((x, y) => x - y))
            const readA = yield* store.readEvents(a, 0, 500)
            const readB = yield* store.readEvents(b, 0, 500)
            expect(readA.map((e) => e.payload)).toEqual([{}, { text: "a1" }, { text: "a2" }])
            expect(readB.map((e) => e.payload)).toEqual([{ text: "b1" }, { text: "b2" }])
            expect(readA.slice(1).map((e) => e.event_id)).toEqual([ids[0], ids[2]])
            // One commit, one timestamp.
            expect(new Set([...readA.slice(1), ...readB].map((e) => e.created_at)).size).toBe(1)
            expect(Option.map(yield* store.getTask(a), (t) => t.event_count)).toEqual(Option.some(3))
            expect(Option.map(yield* store.getTask(b), (t) => t.event_count)).toEqual(Option.some(2))
          })
        )
      )
  )

  it.scoped("an empty batch and a batch of refusals write nothing", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const task = yield* insertRunning()
          expect(yield* store.appendEvents([], eventLimits)).toEqual([])
          const refused = yield* store.appendEvents(
            [{ taskId: task, eventType: "provider.error", payload: { blob: "z".repeat(300) } }],
            { maxEventsPerTask: 10, maxEventBytes: 100 }
          )
          expect(refused.map((o) => Either.isLeft(o) && o.left._tag)).toEqual(["AGENT_EVENT_TOO_LARGE"])
          expect(yield* store.readEvents(task, 0, 500)).toEqual([])
          expect(Option.map(yield* store.getTask(task), (t) => t.event_count)).toEqual(Option.some(0))
        })
      )
    )
  )
})
