import type { TaskStatus } from "@serverfs/domain"
import { Effect, Schema } from "effect"
import type { StoreContext } from "./StoreContext.js"
import { TaskRecord } from "./TaskRecord.js"

/**
 * The operator's bounded task listing (issue 10, `serverfs tasks list`): newest first, exact-match
 * filters, at most `limit` rows. It reads `limit + 1` rows so the caller knows whether more
 * matched (`truncated`) without a COUNT over the table, and only the summary columns — never a
 * manifest, prompt-bearing field or inline result, which would make each row heavy.
 * Ordered by the `tasks_created` index (created_at, task_id); a status filter can use
 * `tasks_status` instead, SQLite's planner picks.
 */
export interface TaskListQuery {
  /** OR-ed; empty or absent: every status. */
  readonly statuses?: ReadonlyArray<TaskStatus> | undefined
  readonly workdirAlias?: string | undefined
  readonly runtime?: string | undefined
  /** 1..500, checked by the caller (the bridge answers INVALID_LIMIT). */
  readonly limit: number
}

export const TaskListRow = TaskRecord.pipe(
  Schema.pick(
    "task_id",
    "runtime",
    "workdir_alias",
    "workdir_slot",
    "profile",
    "status",
    "created_at",
    "updated_at",
    "completed_at",
    "error_code",
    "pending_request_id"
  )
)
export type TaskListRow = typeof TaskListRow.Type

export interface TaskListing {
  readonly tasks: ReadonlyArray<TaskListRow>
  readonly truncated: boolean
}

const decodeRows = Schema.decodeUnknown(Schema.Array(TaskListRow))

export const makeTaskListing = (ctx: StoreContext) => {
  const { sql } = ctx

  const listTasks = (query: TaskListQuery): Effect.Effect<TaskListing> =>
    Effect.orDie(
      Effect.gen(function* () {
        const conditions = [
          ...(query.statuses !== undefined && query.statuses.length > 0
            ? [sql.in("status", query.statuses)]
            : []),
          ...(query.workdirAlias !== undefined ? [sql`workdir_alias = ${query.workdirAlias}`] : []),
          ...(query.runtime !== undefined ? [sql`runtime = ${query.runtime}`] : [])
        ]
        const rows = yield* sql`
          SELECT task_id, runtime, workdir_alias, workdir_slot, profile, status, created_at,
                 updated_at, completed_at, error_code, pending_request_id
          FROM tasks WHERE ${sql.and(conditions)}
          ORDER BY created_at DESC, task_id DESC
          LIMIT ${query.limit + 1}`
        const tasks = yield* decodeRows(rows)
        return { tasks: tasks.slice(0, query.limit), truncated: tasks.length > query.limit }
      })
    )

  return { listTasks } as const
}
