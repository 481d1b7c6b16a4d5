import { SqlClient, SqlError } from "@effect/sql"
import {
  AgentTaskNotFound,
  canonicalJson,
  isTerminal,
  RequestNotFound,
  TaskStatus,
  TerminalStatus
} from "@serverfs/domain"
import { Clock, DateTime, Effect, Either, Option, Schema, type Scope } from "effect"
import type { EventTally } from "./EventLog.js"
import { makeIdleCheckpoint } from "./IdleCheckpoint.js"
import { makeImmediateTransaction } from "./ImmediateTransaction.js"
import { PendingRequestRecord } from "./PendingRequestRecord.js"
import { ResultSpool } from "./ResultSpool.js"
import { TaskRecord } from "./TaskRecord.js"
import type { Instant } from "./TaskStoreShape.js"

/**
 * What every part of the store shares (internal to libs/store): the one connection, the
 * transaction wrappers that turn SQL errors into defects, the row decoders and the time format.
 * The parts (TaskRows, EventLog, PendingRequests, Retention) each take this and return their
 * slice of TaskStoreShape.
 */

export const TERMINAL: ReadonlyArray<string> = TerminalStatus.literals

/**
 * The statuses of a task still active. Queries name these rather than `NOT IN TERMINAL`: an
 * `IN` list is a few lookups in the status index, where `NOT IN` scans all of it, a read that
 * grows with every finished task retained (issue 12).
 */
export const ACTIVE: ReadonlyArray<string> = TaskStatus.literals.filter((status) => !isTerminal(status))

/** UTC ISO-8601 with milliseconds and "Z" (bridge-internals §5): the one time format stored. */
const isoOfMillis = (ms: number): string => DateTime.formatIso(DateTime.unsafeMake(ms))

/** A time given by a caller, normalized; an unparseable one is a programming error (a defect). */
export const isoEffect = (value: Instant): Effect.Effect<string> =>
  Effect.suspend(() => {
    const ms = typeof value === "string" ? Date.parse(value) : value.getTime()
    return Number.isFinite(ms)
      ? Effect.succeed(isoOfMillis(ms))
      : Effect.dieMessage("the store was given an invalid time")
  })

/** An ISO time moved back by some seconds (retention cut-offs). */
export const isoMinusSeconds = (iso: string, seconds: number): string =>
  isoOfMillis(Date.parse(iso) - seconds * 1000)

export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoOfMillis)

/** Canonical JSON of caller data; a value that has none (NaN, a function) is a programming error. */
export const canonical = (value: unknown): Effect.Effect<string> => Effect.sync(() => canonicalJson(value))

export const notFound = (taskId: string) => new AgentTaskNotFound({ message: `task ${taskId} was not found` })

export const requestNotFound = (requestId: string) =>
  new RequestNotFound({ message: `request ${requestId} was not found for this task` })

export const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

const decodeTask = Schema.decodeUnknown(TaskRecord)
const decodeRequest = Schema.decodeUnknown(PendingRequestRecord)

/** Task rows decoded; a row that does not decode is a corrupted database, a defect. */
export const decodeTasks = (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<TaskRecord>> =>
  Effect.orDie(Effect.forEach(rows, (row) => decodeTask(row)))

/** The first row of a task query, decoded (a row that does not decode is a defect). */
export const firstTask = (rows: ReadonlyArray<unknown>): Effect.Effect<Option.Option<TaskRecord>> =>
  rows[0] === undefined ? Effect.succeedNone : Effect.map(Effect.orDie(decodeTask(rows[0])), Option.some)

const isSqlError = (error: unknown): error is SqlError.SqlError => error instanceof SqlError.SqlError

/** SQL errors are defects: callers see only the body's own failures. */
export const sqlErrorsDie = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError.SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> => Effect.catchIf(effect, isSqlError, Effect.die)

export const makeStoreContext = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const spool = yield* ResultSpool
  const immediate = makeImmediateTransaction(sql)
  const checkpoint = yield* makeIdleCheckpoint(sql)

  /** One mutation: BEGIN IMMEDIATE … COMMIT, rolled back on any failure; SQL errors are defects. */
  const mutate = <A, E, R>(
    body: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
    sqlErrorsDie(immediate(body).pipe(Effect.ensuring(checkpoint.wrote)))

  /**
   * One mutation that is a single statement, in autocommit: SQLite takes the write lock when the
   * statement starts, before it reads anything, as BEGIN IMMEDIATE does for a transaction; the
   * statement is atomic (its triggers included). It saves the BEGIN and COMMIT round trips of
   * `mutate` (issue 12). SQL errors are defects.
   */
  const mutateOnce = <A, E, R>(
    statement: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
    sqlErrorsDie(statement.pipe(Effect.ensuring(checkpoint.wrote)))

  /** A consistent multi-statement read (a deferred transaction: no write lock). */
  const read = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
    sqlErrorsDie(sql.withTransaction(body))

  const selectTask = (taskId: string) =>
    Effect.flatMap(sql`SELECT * FROM tasks WHERE task_id = ${taskId}`, firstTask)

  const requireTask = (taskId: string) =>
    Effect.flatMap(
      selectTask(taskId),
      Option.match({ onNone: () => Effect.fail(notFound(taskId)), onSome: Effect.succeed })
    )

  /**
   * The task and its event tally, from one read: for a transition that appends its event in the
   * same transaction (`stored_bytes` is the event log's column, outside TaskRecord).
   */
  const requireTallied = (taskId: string) =>
    Effect.flatMap(sql`SELECT * FROM tasks WHERE task_id = ${taskId}`, (rows) => {
      const row = rows[0]
      if (row === undefined) return Effect.fail(notFound(taskId))
      const storedBytes = (row as { readonly stored_bytes?: unknown }).stored_bytes
      if (typeof storedBytes !== "number" || !Number.isSafeInteger(storedBytes) || storedBytes < 0)
        return Effect.dieMessage("a task row's stored_bytes is not a count")
      return Effect.map(Effect.orDie(decodeTask(row)), (task) => ({
        task,
        tally: { eventCount: task.event_count, storedBytes } satisfies EventTally
      }))
    })

  /** A row the caller knows is there (it read or wrote it in the same transaction): missing is a defect. */
  const present =
    (taskId: string) =>
    (found: Option.Option<TaskRecord>): Effect.Effect<TaskRecord> =>
      Option.match(found, { onNone: () => Effect.die(notFound(taskId)), onSome: Effect.succeed })

  /** The task as stored right now (after an update inside the same transaction). */
  const storedTask = (taskId: string) => Effect.flatMap(selectTask(taskId), present(taskId))

  const selectRequest = (requestId: string) =>
    Effect.flatMap(sql`SELECT * FROM pending_requests WHERE request_id = ${requestId}`, (rows) =>
      rows[0] === undefined
        ? Effect.succeedNone
        : Effect.map(Effect.orDie(decodeRequest(rows[0])), Option.some)
    )

  const storedRequest = (requestId: string) =>
    Effect.flatMap(
      selectRequest(requestId),
      Option.match({ onNone: () => Effect.die(requestNotFound(requestId)), onSome: Effect.succeed })
    )

  /**
   * Writes every column a task may change after insertion (identity columns are immutable) and
   * returns the row as stored, from the same statement (`RETURNING *`, issue 12: a mutation
   * no longer reads the row again after its update). With `tally`, the task's event count and
   * stored bytes too: a transition that appended its own event writes them here rather than in a
   * statement of their own. A task that is not there is a defect: callers have read it in the
   * same transaction.
   */
  const writeTask = (task: TaskRecord, tally?: EventTally) =>
    sql`
    UPDATE tasks SET
      status = ${task.status},
      started_at = ${task.started_at},
      updated_at = ${task.updated_at},
      completed_at = ${task.completed_at},
      native_session_id = ${task.native_session_id},
      native_turn_id = ${task.native_turn_id},
      final_response = ${task.final_response},
      result_storage = ${task.result_storage},
      result_size_bytes = ${task.result_size_bytes},
      result_sha256 = ${task.result_sha256},
      error_code = ${task.error_code},
      error_message = ${task.error_message},
      pending_request_id = ${task.pending_request_id}${
        tally === undefined
          ? sql.literal("")
          : sql`,
      event_count = ${tally.eventCount},
      stored_bytes = ${tally.storedBytes}`
      }
    WHERE task_id = ${task.task_id}
    RETURNING *`.pipe(Effect.flatMap(firstTask), Effect.flatMap(present(task.task_id)))

  /** Stales every pending request of a task; returns their ids (at most one, by the unique index). */
  const staleOpenRequests = (taskId: string) =>
    Effect.map(
      sql<{ readonly request_id: string }>`
        UPDATE pending_requests SET status = 'stale'
        WHERE task_id = ${taskId} AND status = 'pending'
        RETURNING request_id`,
      (rows) => rows.map((row) => row.request_id)
    )

  return {
    sql,
    spool,
    mutate,
    mutateOnce,
    read,
    selectTask,
    requireTask,
    requireTallied,
    storedTask,
    selectRequest,
    storedRequest,
    writeTask,
    staleOpenRequests
  } as const
})

export type StoreContext = Effect.Effect.Success<typeof makeStoreContext>
export type StoreContextRequirements = SqlClient.SqlClient | ResultSpool | Scope.Scope
