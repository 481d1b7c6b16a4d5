/** `TaskStore.layerMemory()`: the same store on an in-memory database, for other packages' unit tests. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ResultSpool, TaskStore } from "../src/index.js"
import { eventLimits, failureTag, insertRunning, interaction } from "./helpers.js"

describe("layerMemory", () => {
  it.effect("runs a task through a question, events, a spooled result and GC", () =>
    Effect.provide(
      Effect.gen(function* () {
        const store = yield* TaskStore
        const spool = yield* ResultSpool
        const taskId = yield* insertRunning({ correlation_id: "mem" })
        const { request } = yield* store.createPendingRequest(
          taskId,
          "question",
          { questions: [] },
          "2100-01-01T00:00:00Z",
          interaction
        )
        yield* store.resolveRequest(taskId, request.request_id, { answers: [] })
        const event = yield* store.appendEvent(taskId, "agent.message", { text: "hi" }, eventLimits)
        expect(event.correlation_id).toBe("mem")
        const written = yield* spool.writeResult(taskId, "done")
        yield* store.transition(taskId, "succeeded", {
          result_storage: "spool",
          result_size_bytes: written.size_bytes
        })
        expect((yield* spool.readResult(taskId, 0, 100)).text).toBe("done")
        expect(yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: 0 })).toEqual([taskId])
        expect(yield* store.getTask(taskId)).toEqual(Option.none())
        expect(failureTag(yield* Effect.exit(spool.readResult(taskId, 0, 10)))).toBe(
          "AGENT_RESULT_STORAGE_ERROR"
        )
        expect(yield* store.integrityCheck()).toEqual(["ok"])
      }),
      TaskStore.layerMemory()
    )
  )
})
