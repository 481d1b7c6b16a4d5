/**
 * The retention check that every submit and every task's end make (Retention.ts) reads only the
 * tasks old enough to go, whatever the number retained: a range read of the completion index. On
 * the status index it read and sorted every terminal task (issue 12: 0.4 ms a submit with 450
 * tasks retained). The check itself is one statement with the storage totals.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { TaskStore } from "../src/index.js"
import { retentionCheckQuery } from "../src/Retention.js"
import { terminalTasksFinishedBefore } from "../src/TaskRows.js"
import { insertFinished, insertQueued, queryPlan, scopedTempState, withStore } from "./helpers.js"

const A_MINUTE_IN = "1970-01-01T00:01:00.000Z"

describe("terminal tasks finished before a cutoff", () => {
  it.scoped(
    "are listed, or checked for with the totals, by a range read of completed_at, never the status index",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        Effect.gen(function* () {
          yield* withStore(
            temp.stateDir,
            Effect.gen(function* () {
              const store = yield* TaskStore
              yield* insertFinished(40)
              yield* insertQueued()
              yield* TestClock.adjust("1 minute")
              // Every terminal task is older than a cutoff a minute later; the queued one never goes.
              expect(yield* store.listTerminalTaskIdsOlderThan(A_MINUTE_IN)).toHaveLength(40)
              expect(yield* store.listTerminalTaskIdsOlderThan(new Date(0))).toHaveLength(0)
              const old = yield* store.retentionCheck(A_MINUTE_IN)
              expect(old.expired).toBe(true)
              expect(old.usage).toEqual(yield* store.storageUsage())
              expect(old.usage.activeTasks).toBe(1)
              expect((yield* store.retentionCheck(new Date(0))).expired).toBe(false)
              // Once collected, none is left past that cutoff.
              yield* store.gc({ retentionSeconds: 0 })
              const after = yield* store.retentionCheck(A_MINUTE_IN)
              expect(after.expired).toBe(false)
              expect(after.usage).toEqual(yield* store.storageUsage())
            })
          )
          for (const statement of [terminalTasksFinishedBefore, retentionCheckQuery]) {
            const details = yield* queryPlan(temp.stateDir, (sql) => statement(sql, A_MINUTE_IN))
            expect(details).toMatch(
              /USING (COVERING )?INDEX tasks_(completed_at|storage) \(completed_at<\?\)/
            )
            expect(details).not.toContain("tasks_status")
          }
        })
      )
  )
})
