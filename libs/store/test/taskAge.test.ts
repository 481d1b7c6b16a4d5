/**
 * The diagnostics generation probe (spec v0.22 §8.1): whether any durable task was created before
 * a moment, answered from `created_at` alone (terminal or not).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { TaskStore } from "../src/index.js"
import { insertQueued, scopedTempState, withStore } from "./helpers.js"

describe("hasTaskCreatedBefore", () => {
  it.scoped("is false on an empty store and for a moment at or before the oldest task, true after it", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          expect(yield* store.hasTaskCreatedBefore("2100-01-01T00:00:00.000Z")).toBe(false)
          yield* TestClock.adjust("10 seconds")
          const taskId = yield* insertQueued()
          // Created at 00:00:10.000: not before itself, before anything later.
          expect(yield* store.hasTaskCreatedBefore("1970-01-01T00:00:10.000Z")).toBe(false)
          expect(yield* store.hasTaskCreatedBefore("1970-01-01T00:00:10.001Z")).toBe(true)
          // A terminal task still counts: its history predates the moment all the same.
          yield* store.transition(taskId, "cancelled")
          expect(yield* store.hasTaskCreatedBefore(new Date(11_000))).toBe(true)
        })
      )
    )
  )
})
