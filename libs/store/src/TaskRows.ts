import type { SqlClient } from "@effect/sql"
import {
  AgentIdempotencyConflict,
  AgentTaskExists,
  AgentTaskLimitReached,
  canTransition,
  isTerminal,
  isWaiting,
  sha256Hex,
  TaskStatus,
  transition as tableTransition
} from "@serverfs/domain"
import { Effect, Either, Option } from "effect"
import type { EventLog } from "./EventLog.js"
import {
  ACTIVE,
  canonical,
  decodeTasks,
  firstTask,
  fromEither,
  isoEffect,
  notFound,
  nowIso,
  type StoreContext,
  TERMINAL
} from "./StoreContext.js"
import { isTaskId, type NewTask, TaskRecord, type TransitionPatch } from "./TaskRecord.js"
import type { Instant, TransitionEvent } from "./TaskStoreShape.js"

/**
 * The terminal tasks that finished before `before`, oldest first: the retention check that every
 * submit makes (Retention.ts), which usually finds none. `+status` keeps the status out of the
 * index choice: on `status IN (…)` SQLite read every terminal task's row and sorted them, work
 * that grew with the tasks retained (0.4 ms a submit with 450 of them in the bridge bench);
 * led by `completed_at < ?`, it is a range read of that index that finds only the old ones.
 */
export const terminalTasksFinishedBefore = (sql: SqlClient.SqlClient, before: string) =>
  sql<{ readonly task_id: string }>`
    SELECT task_id FROM tasks
    WHERE +status IN ${sql.in(TERMINAL)} AND completed_at < ${before}
    ORDER BY completed_at, task_id`

/**
 * How many tasks are active: the cap check of every submit (bridge-internals §3). A lookup of
 * each active status in the status index, whatever the number of finished tasks retained.
 */
export const activeTaskCount = (sql: SqlClient.SqlClient) =>
  sql<{ readonly active: number }>`SELECT COUNT(*) AS active FROM tasks WHERE status IN ${sql.in(ACTIVE)}`

/** The columns of `tasks`, in TaskRecord's order: the conditional insert names each one. */
const TASK_COLUMNS = Object.keys(TaskRecord.fields) as ReadonlyArray<keyof TaskRecord>

/**
 * A submit's insert as one statement (issue 12): the row goes in only if its id is new, its
 * idempotency key (when it has one) unused and fewer than the cap of tasks are active — the
 * three checks of the transaction below, read under the same write lock. It returns the id
 * when it inserted; no row means a check refused, and the transaction then says which. One
 * statement instead of five (BEGIN IMMEDIATE, three reads, INSERT, COMMIT) takes about half of
 * `insertTask`'s time off (docs/performance.md).
 */
const CONDITIONAL_INSERT = `INSERT INTO tasks (${TASK_COLUMNS.map((column) => `"${column}"`).join(", ")})
  SELECT ${TASK_COLUMNS.map(() => "?").join(", ")}
  WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE task_id = ?)
    AND (? IS NULL OR NOT EXISTS (SELECT 1 FROM tasks WHERE idempotency_key = ?))
    AND (SELECT COUNT(*) FROM tasks WHERE status IN (${ACTIVE.map(() => "?").join(", ")})) < ?
  RETURNING task_id`

export const insertIfAllowed = (sql: SqlClient.SqlClient, record: TaskRecord, maxActiveTasks: number) =>
  sql.unsafe<{ readonly task_id: string }>(CONDITIONAL_INSERT, [
    ...TASK_COLUMNS.map((column) => record[column]),
    record.task_id,
    record.idempotency_key,
    record.idempotency_key,
    ...ACTIVE,
    maxActiveTasks
  ])

/**
 * The statuses a task may leave for `to` by a move that changes nothing but its status: none
 * when a move into `to` changes more (it stamps `started_at`, or ends the task); a wait is never
 * among them (leaving it closes the open interaction). From the domain's transition table.
 */
const plainMoveSources = (to: TaskStatus): ReadonlyArray<TaskStatus> =>
  to === "starting" || isTerminal(to)
    ? []
    : TaskStatus.literals.filter((from) => !isWaiting(from) && canTransition(from, to))

/**
 * Task rows (bridge-internals §5): insertion under the active-task cap and the idempotency key,
 * lookups, and the one way a status changes — the domain's transition table, applied inside a
 * BEGIN IMMEDIATE transaction together with the event that announces it.
 */
export const makeTaskRows = (ctx: StoreContext, events: EventLog) => {
  const { sql, mutate, mutateOnce, requireTallied, selectTask, writeTask, staleOpenRequests } = ctx
  const { insertWithin } = events

  const insertTask = Effect.fn("TaskStore.insertTask")(function* (
    task: NewTask,
    options: { readonly maxActiveTasks: number }
  ) {
    if (!isTaskId(task.task_id)) return yield* Effect.dieMessage("insertTask: a task id is agt_ + 24 hex")
    const now = yield* nowIso
    const deadline = yield* isoEffect(task.deadline_at)
    const manifestJson = yield* canonical(task.manifest)
    const record: TaskRecord = {
      task_id: task.task_id,
      runtime: task.runtime,
      workdir_alias: task.workdir_alias,
      workdir_slot: task.workdir_slot,
      relative_cwd: task.relative_cwd,
      profile: task.profile,
      status: "queued",
      created_at: now,
      started_at: null,
      updated_at: now,
      completed_at: null,
      deadline_at: deadline,
      continue_from_task_id: task.continue_from_task_id,
      correlation_id: task.correlation_id,
      idempotency_key: task.idempotency_key,
      request_fingerprint: task.request_fingerprint,
      requested_model: task.requested_model,
      native_session_id: null,
      native_turn_id: null,
      final_response: null,
      result_storage: null,
      result_size_bytes: null,
      result_sha256: null,
      manifest_json: manifestJson,
      manifest_sha256: sha256Hex(manifestJson),
      error_code: null,
      error_message: null,
      pending_request_id: null,
      event_count: 0
    }
    if ((yield* mutateOnce(insertIfAllowed(sql, record, options.maxActiveTasks))).length > 0) return record
    // Refused: the same checks in a transaction name the reason (or insert, if the state changed
    // meanwhile — another process may have finished a task).
    return yield* mutate(
      Effect.gen(function* () {
        if ((yield* sql`SELECT 1 FROM tasks WHERE task_id = ${task.task_id}`).length > 0)
          return yield* new AgentTaskExists({ message: `task ${task.task_id} already exists` })
        if (task.idempotency_key !== null) {
          const holders =
            yield* sql`SELECT task_id FROM tasks WHERE idempotency_key = ${task.idempotency_key}`
          if (holders.length > 0)
            return yield* new AgentIdempotencyConflict({
              message: "the idempotency key is already used by another task"
            })
        }
        // bridge-internals §3: the cap counts non-terminal tasks in the database, in the same
        // transaction as the insert, so concurrent submits (or processes) cannot overshoot it.
        const counted = yield* activeTaskCount(sql)
        const active = counted[0]?.active ?? 0
        if (active >= options.maxActiveTasks)
          return yield* new AgentTaskLimitReached({
            message: `${active} tasks are active; the limit is ${options.maxActiveTasks}`
          })
        yield* sql`INSERT INTO tasks ${sql.insert(record)}`
        // Exactly the row just written (every column is in `record`).
        return record
      })
    )
  })

  const getTask = (taskId: string) => Effect.orDie(selectTask(taskId))

  const findByIdempotencyKey = (key: string) =>
    Effect.orDie(Effect.flatMap(sql`SELECT * FROM tasks WHERE idempotency_key = ${key}`, firstTask))

  const listNonTerminal = () =>
    Effect.orDie(
      Effect.flatMap(
        sql`SELECT * FROM tasks WHERE status IN ${sql.in(ACTIVE)} ORDER BY created_at, task_id`,
        decodeTasks
      )
    )

  const listTerminalTaskIdsOlderThan = (cutoff: Instant) =>
    Effect.flatMap(isoEffect(cutoff), (before) =>
      Effect.orDie(
        Effect.map(terminalTasksFinishedBefore(sql, before), (rows) => rows.map((row) => row.task_id))
      )
    )

  const transition = Effect.fn("TaskStore.transition")(function* (
    taskId: string,
    to: TaskStatus,
    patch: TransitionPatch = {},
    event?: TransitionEvent
  ) {
    const now = yield* nowIso
    // A move with no patch and no event that changes nothing but the status (starting → running
    // on every task) is one conditional UPDATE in autocommit (issue 12: one statement instead of
    // four). When it matches no row — no such task, a wait, a move the table refuses — the
    // transaction below applies the move or says why.
    const sources = event === undefined && Object.keys(patch).length === 0 ? plainMoveSources(to) : []
    if (sources.length > 0) {
      const moved = yield* mutateOnce(
        Effect.flatMap(
          sql`
          UPDATE tasks SET status = ${to}, updated_at = ${now}
          WHERE task_id = ${taskId} AND status IN ${sql.in(sources)}
          RETURNING *`,
          firstTask
        )
      )
      if (Option.isSome(moved))
        return { task: moved.value, staledRequestId: Option.none(), eventRefusal: Option.none() }
    }
    return yield* mutate(
      Effect.gen(function* () {
        const { task: current, tally } = yield* requireTallied(taskId)
        const status = yield* fromEither(tableTransition(current.status, to))
        // Ending the task, or leaving a wait by any route other than resolve/abandon, closes the
        // open interaction in the same transaction: a late answer then gets REQUEST_STALE.
        const closesInteraction = isTerminal(status) || isWaiting(current.status)
        const staled = closesInteraction ? yield* staleOpenRequests(taskId) : []
        // The event is checked against the tally just read and inserted; the task's write below
        // then stores the new tally with the status (issue 12: two statements fewer than a
        // separate append), and its RETURNING row is the task as this transaction leaves it.
        const appended =
          event === undefined
            ? undefined
            : yield* insertWithin([{ taskId, ...event }], event.limits, now, new Map([[taskId, tally]]))
        const eventRefusal =
          appended === undefined
            ? Option.none()
            : Either.match(appended.outcomes[0]!, { onLeft: Option.some, onRight: () => Option.none() })
        const task = yield* writeTask(
          {
            ...current,
            status,
            updated_at: now,
            started_at:
              patch.started_at !== undefined
                ? yield* isoEffect(patch.started_at)
                : status === "starting" && current.started_at === null
                  ? now
                  : current.started_at,
            completed_at: isTerminal(status) ? now : current.completed_at,
            pending_request_id: closesInteraction ? null : current.pending_request_id,
            error_code: patch.error_code !== undefined ? patch.error_code : current.error_code,
            error_message: patch.error_message !== undefined ? patch.error_message : current.error_message,
            final_response:
              patch.final_response !== undefined ? patch.final_response : current.final_response,
            result_storage:
              patch.result_storage !== undefined ? patch.result_storage : current.result_storage,
            result_size_bytes:
              patch.result_size_bytes !== undefined ? patch.result_size_bytes : current.result_size_bytes,
            result_sha256: patch.result_sha256 !== undefined ? patch.result_sha256 : current.result_sha256,
            native_session_id:
              patch.native_session_id !== undefined ? patch.native_session_id : current.native_session_id,
            native_turn_id: patch.native_turn_id !== undefined ? patch.native_turn_id : current.native_turn_id
          },
          appended?.tallies.get(taskId)
        )
        return {
          task,
          staledRequestId: Option.fromNullable(staled[0]),
          eventRefusal
        }
      })
    )
  })

  const setNativeIds = Effect.fn("TaskStore.setNativeIds")(function* (
    taskId: string,
    ids: { readonly sessionId?: string; readonly turnId?: string }
  ) {
    const now = yield* nowIso
    // One statement in autocommit (issue 12): an id not given keeps the stored one, and the row
    // comes back as written; no row means no such task.
    const written = yield* mutateOnce(
      Effect.flatMap(
        sql`
        UPDATE tasks SET
          updated_at = ${now},
          native_session_id = COALESCE(${ids.sessionId ?? null}, native_session_id),
          native_turn_id = COALESCE(${ids.turnId ?? null}, native_turn_id)
        WHERE task_id = ${taskId}
        RETURNING *`,
        firstTask
      )
    )
    return yield* Option.match(written, {
      onNone: () => Effect.fail(notFound(taskId)),
      onSome: Effect.succeed
    })
  })

  return {
    insertTask,
    getTask,
    findByIdempotencyKey,
    listNonTerminal,
    listTerminalTaskIdsOlderThan,
    transition,
    setNativeIds
  }
}
export type TaskRows = ReturnType<typeof makeTaskRows>
