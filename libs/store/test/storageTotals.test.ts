/**
 * The disk budget's totals (migration 0004) are one row kept by triggers: whatever happens to
 * the tasks — inserts, events, results inline or spooled, finishing, collection, eviction — the
 * row is what a sum over every task would give, and a database from before the migration gets
 * its existing tasks counted once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { MIGRATIONS_TABLE, ResultSpool, type StorageUsage, TaskStore } from "../src/index.js"
import { taskBudgetBytes } from "../src/Migrations.js"
import { ACTIVE } from "../src/StoreContext.js"
import {
  eventLimits,
  insertQueued,
  insertRunning,
  rawRows,
  scopedTempState,
  withRawSql,
  withStore
} from "./helpers.js"

/** The totals as a sum over every task, on a connection of its own. */
const summed = (stateDir: string): Effect.Effect<StorageUsage, unknown> =>
  withRawSql(
    stateDir,
    Effect.map(
      rawRows(`
        SELECT COALESCE(SUM(bytes), 0) AS total, COALESCE(SUM(active * bytes), 0) AS active,
          COALESCE(SUM(active), 0) AS tasks
        FROM (SELECT ${taskBudgetBytes("")} AS bytes,
          (status IN (${ACTIVE.map((s) => `'${s}'`).join(", ")})) AS active FROM tasks)`),
      (rows) => ({
        totalBytes: Number(rows[0]?.total),
        activeBytes: Number(rows[0]?.active),
        activeTasks: Number(rows[0]?.tasks)
      })
    )
  )

/** A finished task with events and a result, inline or spooled. */
const finished = (storage: "inline" | "spool", resultBytes: number) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const spool = yield* ResultSpool
    const taskId = yield* insertRunning()
    for (let i = 0; i < 3; i++)
      yield* store.appendEvent(taskId, "agent.message", { text: "x".repeat(500) }, eventLimits)
    const written = yield* spool.writeResult(taskId, "r".repeat(resultBytes))
    yield* store.transition(taskId, "succeeded", {
      result_storage: storage,
      result_size_bytes: written.size_bytes,
      result_sha256: written.sha256
    })
    yield* TestClock.adjust("1 second")
    return taskId
  })

describe("the storage totals", () => {
  it.scoped("always equal the sum over the tasks, through every kind of change", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const agree = Effect.gen(function* () {
            const kept = yield* store.storageUsage()
            expect(kept).toEqual(yield* summed(temp.stateDir))
            return kept
          })
          expect(yield* agree).toEqual({ totalBytes: 0, activeBytes: 0, activeTasks: 0 })
          yield* insertQueued()
          const running = yield* insertRunning()
          for (let i = 0; i < 5; i++)
            yield* store.appendEvent(running, "agent.message", { text: "y".repeat(800) }, eventLimits)
          yield* store.appendEvents(
            [
              { taskId: running, eventType: "agent.message", payload: { text: "z" } },
              { taskId: running, eventType: "agent.message", payload: { text: "zz" } }
            ],
            eventLimits
          )
          const active = yield* agree
          expect(active.activeTasks).toBe(2)
          expect(active.activeBytes).toBe(active.totalBytes)
          const inline = yield* finished("inline", 2_000)
          const spooled = yield* finished("spool", 10_000)
          // A transition's own event is counted in the transition's write of the task.
          yield* store.transition(
            running,
            "cancelled",
            {},
            {
              eventType: "task.cancelled",
              payload: { reason: "z".repeat(300) },
              limits: eventLimits
            }
          )
          const all = yield* agree
          expect(all.activeTasks).toBe(1)
          expect(all.totalBytes).toBeGreaterThan(all.activeBytes + 10_000 + 65_536)
          // Eviction and collection delete rows: the triggers take them off again.
          const evicted = yield* store.evictForBudget({ budgetBytes: all.totalBytes - 1, reserveBytes: 0 })
          expect(evicted.evicted).toEqual([inline])
          expect(evicted.usageBytes).toBe((yield* agree).totalBytes)
          yield* TestClock.adjust("30 days")
          expect(yield* store.gc({ retentionSeconds: 3600 })).toEqual(
            expect.arrayContaining([spooled, running])
          )
          expect(yield* agree).toMatchObject({ activeTasks: 1 })
        })
      )
    )
  )

  it.scoped("count a database's existing tasks once when the migration first runs", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const before = yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            yield* insertQueued()
            yield* finished("spool", 5_000)
            yield* finished("inline", 1_000)
            return yield* Effect.flatMap(TaskStore, (store) => store.storageUsage())
          })
        )
        // Back to a database of migration 0003: no totals, no triggers, the migration unrecorded.
        yield* withRawSql(
          temp.stateDir,
          Effect.gen(function* () {
            for (const trigger of ["storage_totals_insert", "storage_totals_delete", "storage_totals_update"])
              yield* rawRows(`DROP TRIGGER ${trigger}`)
            yield* rawRows("DROP TABLE storage_totals")
            yield* rawRows(`DELETE FROM ${MIGRATIONS_TABLE} WHERE name = 'storage_totals'`)
          })
        )
        const after = yield* withStore(
          temp.stateDir,
          Effect.flatMap(TaskStore, (store) => store.storageUsage())
        )
        expect(after).toEqual(before)
        expect(after).toEqual(yield* summed(temp.stateDir))
        expect(after.activeTasks).toBe(1)
      })
    )
  )
})
