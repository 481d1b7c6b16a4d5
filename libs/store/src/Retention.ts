import type { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { taskBudgetBytes } from "./Migrations.js"
import { isoEffect, isoMinusSeconds, nowIso, type StoreContext, TERMINAL } from "./StoreContext.js"
import type { TaskRows } from "./TaskRows.js"
import type { BudgetOptions, GcOptions, Instant, RetentionCheck, StorageUsage } from "./TaskStoreShape.js"

interface TotalsRow {
  readonly total_bytes: number
  readonly active_bytes: number
  readonly active_tasks: number
}

/**
 * The retention check of every submit and every task's end, as one statement (issue 12: it was
 * two, the list of expired tasks and the totals): the storage totals row, kept by the schema's
 * triggers (migration 0004), and whether a finished task completed before `before` — the same
 * range read of the completion index as `terminalTasksFinishedBefore`, stopped at its first row.
 */
export const retentionCheckQuery = (sql: SqlClient.SqlClient, before: string) =>
  sql<TotalsRow & { readonly expired: number }>`
    SELECT total_bytes, active_bytes, active_tasks,
      EXISTS (SELECT 1 FROM tasks WHERE +status IN ${sql.in(TERMINAL)} AND completed_at < ${before}) AS expired
    FROM storage_totals WHERE id = 1`

/** The totals row is created by its migration and never deleted: missing is a defect. */
const totalsOf = <Row extends TotalsRow>(rows: ReadonlyArray<Row>): Effect.Effect<Row> =>
  rows[0] === undefined ? Effect.dieMessage("the storage totals row is missing") : Effect.succeed(rows[0])

const usageOf = (row: TotalsRow): StorageUsage => ({
  totalBytes: row.total_bytes,
  activeBytes: row.active_bytes,
  activeTasks: row.active_tasks
})

/**
 * Retention (spec v0.7 §2.2, bridge-internals §3): finished tasks collected after the retention
 * period, or evicted oldest-first when the state's disk budget is short — never an active task
 * nor one a recovery guard points at — each removed whole, its spool file first.
 */
export const makeRetention = (ctx: StoreContext, tasks: TaskRows) => {
  const { sql, spool, mutate } = ctx
  const { listTerminalTaskIdsOlderThan } = tasks

  const gc = Effect.fn("TaskStore.gc")(function* (options: GcOptions) {
    if (!Number.isFinite(options.retentionSeconds) || options.retentionSeconds < 0)
      return yield* Effect.dieMessage("gc: retentionSeconds must be a non-negative number")
    const now = options.now !== undefined ? yield* isoEffect(options.now) : yield* nowIso
    const cutoff = isoMinusSeconds(now, options.retentionSeconds)
    const guarded = new Set(options.protectedTaskIds ?? [])
    const candidates = (yield* listTerminalTaskIdsOlderThan(cutoff)).filter((id) => !guarded.has(id))
    const deleted: Array<string> = []
    for (const taskId of candidates) {
      if (yield* removeFinished(taskId, cutoff)) deleted.push(taskId)
    }
    return deleted
  })

  /**
   * Delete one finished task as a whole unit (spec v0.7 §2.2): the spool file first — if it
   * cannot be removed the row stays (and a later pass retries) rather than orphaning a result on
   * disk — then the row, with its events and requests by cascade, only if it is still terminal
   * (and, with `completedBefore`, still older than that).
   */
  const removeFinished = (taskId: string, completedBefore?: string) =>
    Effect.gen(function* () {
      const removed = yield* Effect.either(spool.removeResult(taskId))
      if (Either.isLeft(removed)) {
        yield* Effect.logWarning("a finished task was kept: its result could not be removed").pipe(
          Effect.annotateLogs({ task_id: taskId, code: removed.left._tag })
        )
        return false
      }
      const rows = yield* mutate(
        completedBefore === undefined
          ? sql`
              DELETE FROM tasks WHERE task_id = ${taskId} AND status IN ${sql.in(TERMINAL)}
              RETURNING task_id`
          : sql`
              DELETE FROM tasks
              WHERE task_id = ${taskId} AND status IN ${sql.in(TERMINAL)} AND completed_at < ${completedBefore}
              RETURNING task_id`
      )
      return rows.length > 0
    })

  /** A task's bytes (events, result, a spooled result's preview), as SQL over `tasks`. */
  const taskBytes = sql.literal(taskBudgetBytes(""))

  /** One row, kept by the schema's triggers (migration 0004): never a sum over the tasks. */
  const storageUsage = (): Effect.Effect<StorageUsage> =>
    Effect.orDie(
      Effect.flatMap(
        sql<TotalsRow>`SELECT total_bytes, active_bytes, active_tasks FROM storage_totals WHERE id = 1`,
        (rows) => Effect.map(totalsOf(rows), usageOf)
      )
    )

  const retentionCheck = (cutoff: Instant): Effect.Effect<RetentionCheck> =>
    Effect.flatMap(isoEffect(cutoff), (before) =>
      Effect.orDie(
        Effect.flatMap(retentionCheckQuery(sql, before), (rows) =>
          Effect.map(totalsOf(rows), (row) => ({ expired: row.expired !== 0, usage: usageOf(row) }))
        )
      )
    )

  // The eviction scan reads only the covering index tasks_storage (migration 0002), never task rows.
  const evictForBudget = Effect.fn("TaskStore.evictForBudget")(function* (options: BudgetOptions) {
    let usage = (yield* storageUsage()).totalBytes
    const evicted: Array<string> = []
    if (usage + options.reserveBytes <= options.budgetBytes) return { evicted, usageBytes: usage }
    const guarded = new Set(options.protectedTaskIds ?? [])
    const candidates = yield* Effect.orDie(sql<{ readonly task_id: string; readonly bytes: number }>`
      SELECT task_id, ${taskBytes} AS bytes FROM tasks INDEXED BY tasks_storage
      WHERE completed_at IS NOT NULL AND status IN ${sql.in(TERMINAL)}
      ORDER BY completed_at, task_id`)
    for (const { task_id, bytes } of candidates) {
      if (usage + options.reserveBytes <= options.budgetBytes) break
      if (guarded.has(task_id)) continue
      if (yield* removeFinished(task_id)) {
        evicted.push(task_id)
        usage -= bytes
      }
    }
    // Recounted: the tasks still running went on writing meanwhile.
    return { evicted, usageBytes: (yield* storageUsage()).totalBytes }
  })

  return { gc, storageUsage, retentionCheck, evictForBudget }
}
export type Retention = ReturnType<typeof makeRetention>
