/**
 * The operator's task listing (issue 10): newest first, exact-match filters OR-ed over statuses,
 * `limit` rows at most with `truncated` saying more matched, and only summary columns.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { TaskStore } from "../src/index.js"
import { insertQueued, scopedTempState, withStore } from "./helpers.js"

describe("listTasks", () => {
  it.scoped("lists newest first, filters by status, workdir and runtime, and reports truncation", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const ids: Array<string> = []
          for (let i = 0; i < 5; i++) {
            yield* TestClock.adjust("1 second")
            ids.push(
              yield* insertQueued({
                workdir_alias: i % 2 === 0 ? "even" : "odd",
                runtime: i === 4 ? "codex" : "fake",
                correlation_id: "corr-secret"
              })
            )
          }
          yield* store.transition(ids[0] ?? "", "cancelled")
          yield* store.transition(ids[1] ?? "", "starting")

          const all = yield* store.listTasks({ limit: 10 })
          expect(all.tasks.map((t) => t.task_id)).toEqual([...ids].reverse())
          expect(all.truncated).toBe(false)
          // Summary columns only: nothing of the manifest, correlation id or result.
          expect(Object.keys(all.tasks[0] ?? {}).sort()).toEqual(
            [
              "completed_at",
              "created_at",
              "error_code",
              "pending_request_id",
              "profile",
              "runtime",
              "status",
              "task_id",
              "updated_at",
              "workdir_alias",
              "workdir_slot"
            ].sort()
          )

          const two = yield* store.listTasks({ limit: 2 })
          expect(two.tasks.map((t) => t.task_id)).toEqual([ids[4], ids[3]])
          expect(two.truncated).toBe(true)
          const exact = yield* store.listTasks({ limit: 5 })
          expect(exact.truncated).toBe(false)

          const some = yield* store.listTasks({ statuses: ["cancelled", "starting"], limit: 10 })
          expect(some.tasks.map((t) => t.task_id)).toEqual([ids[1], ids[0]])
          const even = yield* store.listTasks({ workdirAlias: "even", limit: 10 })
          expect(even.tasks.map((t) => t.task_id)).toEqual([ids[4], ids[2], ids[0]])
          const codex = yield* store.listTasks({ runtime: "codex", workdirAlias: "even", limit: 10 })
          expect(codex.tasks.map((t) => t.task_id)).toEqual([ids[4]])
          const none = yield* store.listTasks({ statuses: ["succeeded"], limit: 10 })
          expect(none).toEqual({ tasks: [], truncated: false })
        })
      )
    )
  )
})
