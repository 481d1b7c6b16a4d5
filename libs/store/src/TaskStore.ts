import { SqlClient, type SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import {
  AgentEventLimitReached,
  AgentEventTooLarge,
  AgentIdempotencyConflict,
  AgentInteractionTooLarge,
  AgentTaskExists,
  AgentTaskLimitReached,
  AgentTaskNotFound,
  canonicalJson,
  InvalidLimit,
  type InvalidTaskTransition,
  isTerminal,
  isWaiting,
  RequestAlreadyResolved,
  type RequestKind,
  RequestNotFound,
  RequestPending,
  RequestStale,
  type StateDirectoryUnsafe,
  sha256Hex,
  type TaskEvent,
  type TaskStatus,
  TerminalStatus,
  transition as tableTransition
} from "@serverfs/domain"
import { Clock, Context, Effect, Either, Layer, Option, Schema } from "effect"
import { fitEventPayload } from "./EventPayload.js"
import { makeIdleCheckpoint } from "./IdleCheckpoint.js"
import { makeImmediateTransaction } from "./ImmediateTransaction.js"
import { EVENT_ROW_OVERHEAD_BYTES, runMigrations } from "./Migrations.js"
import { PendingRequestRecord } from "./PendingRequestRecord.js"
import { ResultSpool } from "./ResultSpool.js"
import { forceDatabaseModes, prepareStateDirectory } from "./StateDirectory.js"
import { isTaskId, makeRequestId, type NewTask, TaskRecord, type TransitionPatch } from "./TaskRecord.js"
import { utf8Length } from "./Utf8.js"

/**
 * The bridge's durable task store (bridge-internals §5–§7, spec v0.7): tasks, the global event
 * log, pending approvals/questions, idempotency, the active-task cap and retention GC, over one
 * SQLite connection. Every mutation is one `BEGIN IMMEDIATE` transaction, so each check it makes
 * (the cap, a duplicate key, the current request) holds until it commits. A status changes only
 * through the domain's transition table.
 *
 * Database failures (I/O errors, a corrupt file, a lock held past busy_timeout) are defects: the
 * bridge reports them as BRIDGE_PROTOCOL_ERROR; the typed errors are the contract's codes.
 */

/** A point in time given to the store: a Date or an ISO-8601 string. */
export type Instant = Date | string

/** The longest page of events one `readEvents` returns (bridge-internals §4: limit 1..500). */
export const MAX_EVENTS_PAGE = 500
/** Rows per multi-row event INSERT: 4 parameters each, well under SQLite's 32766. */
const INSERT_ROWS = 500

export interface TransitionResult {
  readonly task: TaskRecord
  /** The pending request this transition staled (a terminal transition or leaving a wait). */
  readonly staledRequestId: Option.Option<string>
  /** Why the event given with the transition was not stored (the transition happened anyway). */
  readonly eventRefusal: Option.Option<EventRefusal>
}

export type EventRefusal = AgentTaskNotFound | AgentEventTooLarge | AgentEventLimitReached

export interface EventLimits {
  readonly maxEventsPerTask: number
  readonly maxEventBytes: number
  /**
   * The most bytes one task's events may take (see `eventStoredBytes`): a task's share of the
   * state's disk budget. Unset: no byte bound beyond the two above.
   */
  readonly maxStoredBytesPerTask?: number
}

/** What an event counts against its task's share and the state's disk budget. */
export const eventStoredBytes = (eventType: string, payloadJson: string): number =>
  utf8Length(payloadJson) + utf8Length(eventType) + EVENT_ROW_OVERHEAD_BYTES

/** What a task's result counts: the bytes stored inline or spooled, plus a spooled one's preview. */
export const RESULT_PREVIEW_ALLOWANCE_BYTES = 65_536

export interface BudgetOptions {
  /** The state's disk budget (events, results). */
  readonly budgetBytes: number
  /** Room to keep free beyond the current usage (a new task's share). */
  readonly reserveBytes: number
  /** Tasks a recovery guard still points at: never evicted. */
  readonly protectedTaskIds?: Iterable<string>
}

export interface StorageUsage {
  /** Every task's bytes. */
  readonly totalBytes: number
  /** The non-terminal tasks' bytes, and how many they are. */
  readonly activeBytes: number
  readonly activeTasks: number
}

export interface BudgetOutcome {
  /** Finished tasks evicted, oldest first. */
  readonly evicted: ReadonlyArray<string>
  /** The usage after eviction. */
  readonly usageBytes: number
}

/** An event stored in the same transaction as a status change (the task's own). */
export interface TransitionEvent {
  readonly eventType: string
  readonly payload: Readonly<Record<string, unknown>>
  readonly limits: EventLimits
}

export interface RequestChange {
  readonly request: PendingRequestRecord
  readonly task: TaskRecord
}

export interface AbandonResult {
  readonly task: TaskRecord
  /** Whether the request was still pending and is now stale. */
  readonly staled: boolean
}

export interface GcOptions {
  /** Defaults to the Clock. */
  readonly now?: Instant
  readonly retentionSeconds: number
  /** Tasks a recovery guard still points at (bridge-internals §3): never collected. */
  readonly protectedTaskIds?: Iterable<string>
}

/** An event to append: the payload is fitted to the size limit (bridge-internals §7.1) first. */
export interface NewEvent {
  readonly taskId: string
  readonly eventType: string
  readonly payload: Readonly<Record<string, unknown>>
}

export interface TaskStoreShape {
  readonly insertTask: (
    task: NewTask,
    options: { readonly maxActiveTasks: number }
  ) => Effect.Effect<TaskRecord, AgentTaskExists | AgentIdempotencyConflict | AgentTaskLimitReached>
  readonly getTask: (taskId: string) => Effect.Effect<Option.Option<TaskRecord>>
  readonly findByIdempotencyKey: (key: string) => Effect.Effect<Option.Option<TaskRecord>>
  /** Every queued, starting, running or waiting task, oldest first. */
  readonly listNonTerminal: () => Effect.Effect<ReadonlyArray<TaskRecord>>
  /** Terminal tasks with completed_at < cutoff, oldest first. */
  readonly listTerminalTaskIdsOlderThan: (cutoff: Instant) => Effect.Effect<ReadonlyArray<string>>
  /**
   * The only way a status changes (the domain's transition table). With `event`, that event is
   * stored in the same transaction: no reader sees the new status without it.
   */
  readonly transition: (
    taskId: string,
    to: TaskStatus,
    patch?: TransitionPatch,
    event?: TransitionEvent
  ) => Effect.Effect<TransitionResult, AgentTaskNotFound | InvalidTaskTransition>
  readonly setNativeIds: (
    taskId: string,
    ids: { readonly sessionId?: string; readonly turnId?: string }
  ) => Effect.Effect<TaskRecord, AgentTaskNotFound>
  readonly appendEvent: (
    taskId: string,
    eventType: string,
    payload: Readonly<Record<string, unknown>>,
    limits: EventLimits
  ) => Effect.Effect<TaskEvent, EventRefusal>
  /**
   * Several events, of one or many tasks, in one transaction and in the given order: the bridge's
   * event writer commits whatever accumulated while the previous batch was being written. Each
   * entry gets its own outcome (its event id, or why it was refused); a refused entry does not
   * affect the others. Every event of the batch is stamped with the commit time.
   */
  readonly appendEvents: (
    events: ReadonlyArray<NewEvent>,
    limits: EventLimits
  ) => Effect.Effect<ReadonlyArray<Either.Either<number, EventRefusal>>>
  readonly readEvents: (
    taskId: string,
    afterEventId: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<TaskEvent>, AgentTaskNotFound | InvalidLimit>
  /**
   * Persist an approval or question and move the task to its waiting status. With `announce`,
   * the `<kind>.requested` event ({request_id, expires_at}) is stored in the same transaction.
   */
  readonly createPendingRequest: (
    taskId: string,
    kind: RequestKind,
    payload: unknown,
    expiresAt: Instant,
    limits: { readonly maxInteractionBytes: number },
    announce?: EventLimits
  ) => Effect.Effect<
    RequestChange,
    AgentTaskNotFound | RequestPending | InvalidTaskTransition | AgentInteractionTooLarge
  >
  readonly resolveRequest: (
    taskId: string,
    requestId: string,
    resolution: unknown,
    limits?: { readonly maxInteractionBytes?: number }
  ) => Effect.Effect<
    RequestChange,
    RequestNotFound | RequestAlreadyResolved | RequestStale | InvalidTaskTransition | AgentInteractionTooLarge
  >
  readonly staleRequest: (requestId: string) => Effect.Effect<boolean>
  readonly abandonPendingRequest: (
    taskId: string,
    requestId: string
  ) => Effect.Effect<AbandonResult, AgentTaskNotFound | RequestNotFound>
  readonly getPendingRequest: (requestId: string) => Effect.Effect<Option.Option<PendingRequestRecord>>
  readonly gc: (options: GcOptions) => Effect.Effect<ReadonlyArray<string>>
  /** The bytes the state holds for its tasks (events and results): one aggregate query. */
  readonly storageUsage: () => Effect.Effect<StorageUsage>
  /**
   * Evict finished tasks, oldest completion first (never an active or a protected one), until
   * usage + reserve fits the budget or nothing evictable is left. Each goes whole, as in `gc`.
   */
  readonly evictForBudget: (options: BudgetOptions) => Effect.Effect<BudgetOutcome>
  /** `PRAGMA integrity_check`: `["ok"]` for a sound database. */
  readonly integrityCheck: () => Effect.Effect<ReadonlyArray<string>>
}

// ---------------------------------------------------------------------------------------------

const TERMINAL: ReadonlyArray<string> = TerminalStatus.literals

const toIso = (value: Instant): string => {
  const ms = typeof value === "string" ? Date.parse(value) : value.getTime()
  if (!Number.isFinite(ms)) throw new Error("the store was given an invalid time")
  return new Date(ms).toISOString()
}

const isoEffect = (value: Instant): Effect.Effect<string> => Effect.sync(() => toIso(value))

const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** Canonical JSON of caller data; a value that has none (NaN, a function) is a programming error. */
const canonical = (value: unknown): Effect.Effect<string> => Effect.sync(() => canonicalJson(value))

const decodeTask = Schema.decodeUnknown(TaskRecord)
const decodeRequest = Schema.decodeUnknown(PendingRequestRecord)

/** The first row of a task query, decoded (a row that does not decode is a defect). */
const firstTask = (rows: ReadonlyArray<unknown>): Effect.Effect<Option.Option<TaskRecord>> =>
  rows[0] === undefined ? Effect.succeedNone : Effect.map(Effect.orDie(decodeTask(rows[0])), Option.some)

/** SQL errors are defects: callers see only the body's own failures. */
const sqlErrorsDie = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError.SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
  effect.pipe(
    Effect.catchIf(
      (error): error is Extract<E | SqlError.SqlError, SqlError.SqlError> =>
        (error as { readonly _tag?: unknown })._tag === "SqlError",
      (error) => Effect.die(error)
    )
  ) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>

const EventRow = Schema.Struct({
  event_id: Schema.Int,
  task_id: Schema.String,
  event_type: Schema.String,
  payload_json: Schema.String,
  created_at: Schema.String
})
const decodeEventRow = Schema.decodeUnknown(EventRow)

const notFound = (taskId: string) => new AgentTaskNotFound({ message: `task ${taskId} was not found` })

const requestNotFound = (requestId: string) =>
  new RequestNotFound({ message: `request ${requestId} was not found for this task` })

const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

const makeStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const spool = yield* ResultSpool
  const immediate = makeImmediateTransaction(sql)

  // bridge-internals §5: foreign keys on (events and requests cascade with their task),
  // busy_timeout 5000 ms. WAL + synchronous NORMAL (SQLite's recommended pairing): a committed
  // transaction survives any crash of the process; only an OS crash or power loss can lose the
  // last commits, never corrupt the database. FULL would fsync every event (10–20 ms each here).
  yield* Effect.orDie(sql`PRAGMA foreign_keys = ON`)
  yield* Effect.orDie(sql`PRAGMA busy_timeout = 5000`)
  yield* Effect.orDie(sql`PRAGMA synchronous = NORMAL`)
  yield* Effect.orDie(runMigrations)
  const checkpoint = yield* makeIdleCheckpoint(sql)

  /** One mutation: BEGIN IMMEDIATE … COMMIT, rolled back on any failure; SQL errors are defects. */
  const mutate = <A, E, R>(
    body: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
    sqlErrorsDie(immediate(body).pipe(Effect.ensuring(checkpoint.wrote)))

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

  /** The task as stored right now (after an update inside the same transaction). */
  const storedTask = (taskId: string) =>
    Effect.flatMap(
      selectTask(taskId),
      Option.match({ onNone: () => Effect.die(notFound(taskId)), onSome: Effect.succeed })
    )

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

  /** Writes every column a task may change after insertion (identity columns are immutable). */
  const writeTask = (task: TaskRecord) => sql`
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
      pending_request_id = ${task.pending_request_id}
    WHERE task_id = ${task.task_id}`

  /** Stales every pending request of a task; returns their ids (at most one, by the unique index). */
  const staleOpenRequests = (taskId: string) =>
    Effect.map(
      sql<{ readonly request_id: string }>`
        UPDATE pending_requests SET status = 'stale'
        WHERE task_id = ${taskId} AND status = 'pending'
        RETURNING request_id`,
      (rows) => rows.map((row) => row.request_id)
    )

  const toEvent = (row: typeof EventRow.Type, correlationId: string | null): TaskEvent => ({
    schema_version: 1,
    event_id: row.event_id,
    task_id: row.task_id,
    correlation_id: correlationId,
    event_type: row.event_type,
    payload: JSON.parse(row.payload_json) as Record<string, unknown>,
    created_at: row.created_at
  })

  // -------------------------------------------------------------------------------------------

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
        const counted = yield* sql<{ readonly active: number }>`
          SELECT COUNT(*) AS active FROM tasks WHERE status NOT IN ${sql.in(TERMINAL)}`
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
        sql`SELECT * FROM tasks WHERE status NOT IN ${sql.in(TERMINAL)} ORDER BY created_at, task_id`,
        (rows) => Effect.orDie(Effect.forEach(rows, (row) => decodeTask(row)))
      )
    )

  const listTerminalTaskIdsOlderThan = (cutoff: Instant) =>
    Effect.flatMap(isoEffect(cutoff), (before) =>
      Effect.orDie(
        Effect.map(
          sql<{ readonly task_id: string }>`
            SELECT task_id FROM tasks
            WHERE status IN ${sql.in(TERMINAL)} AND completed_at < ${before}
            ORDER BY completed_at, task_id`,
          (rows) => rows.map((row) => row.task_id)
        )
      )
    )

  const transition = Effect.fn("TaskStore.transition")(function* (
    taskId: string,
    to: TaskStatus,
    patch: TransitionPatch = {},
    event?: TransitionEvent
  ) {
    const now = yield* nowIso
    return yield* mutate(
      Effect.gen(function* () {
        const current = yield* requireTask(taskId)
        const status = yield* fromEither(tableTransition(current.status, to))
        // Ending the task, or leaving a wait by any route other than resolve/abandon, closes the
        // open interaction in the same transaction: a late answer then gets REQUEST_STALE.
        const closesInteraction = isTerminal(status) || isWaiting(current.status)
        const staled = closesInteraction ? yield* staleOpenRequests(taskId) : []
        yield* writeTask({
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
          final_response: patch.final_response !== undefined ? patch.final_response : current.final_response,
          result_storage: patch.result_storage !== undefined ? patch.result_storage : current.result_storage,
          result_size_bytes:
            patch.result_size_bytes !== undefined ? patch.result_size_bytes : current.result_size_bytes,
          result_sha256: patch.result_sha256 !== undefined ? patch.result_sha256 : current.result_sha256,
          native_session_id:
            patch.native_session_id !== undefined ? patch.native_session_id : current.native_session_id,
          native_turn_id: patch.native_turn_id !== undefined ? patch.native_turn_id : current.native_turn_id
        })
        const eventRefusal =
          event === undefined
            ? Option.none()
            : Either.match((yield* appendWithin([{ taskId, ...event }], event.limits, now))[0]!, {
                onLeft: Option.some,
                onRight: () => Option.none()
              })
        return {
          task: yield* storedTask(taskId),
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
    return yield* mutate(
      Effect.gen(function* () {
        const current = yield* requireTask(taskId)
        yield* writeTask({
          ...current,
          updated_at: now,
          native_session_id: ids.sessionId ?? current.native_session_id,
          native_turn_id: ids.turnId ?? current.native_turn_id
        })
        return yield* storedTask(taskId)
      })
    )
  })

  /** One event in its own transaction, returned as readEvents will return it. */
  const appendEvent = Effect.fn("TaskStore.appendEvent")(function* (
    taskId: string,
    eventType: string,
    payload: Readonly<Record<string, unknown>>,
    limits: EventLimits
  ) {
    const now = yield* nowIso
    return yield* mutate(
      Effect.gen(function* () {
        const outcome = (yield* appendWithin([{ taskId, eventType, payload }], limits, now))[0]!
        if (Either.isLeft(outcome)) return yield* outcome.left
        const task = yield* storedTask(taskId)
        const rows = yield* sql`
          SELECT event_id, task_id, event_type, payload_json, created_at FROM events
          WHERE event_id = ${outcome.right}`
        return toEvent(yield* Effect.orDie(decodeEventRow(rows[0])), task.correlation_id)
      })
    )
  })

  /**
   * Events appended inside the caller's transaction, in order: one count read per task, every
   * accepted event in multi-row INSERTs, one count write per task — a handful of statements per
   * batch, not several per event. Each entry gets its own outcome.
   */
  const appendWithin = (events: ReadonlyArray<NewEvent>, limits: EventLimits, now: string) =>
    Effect.gen(function* () {
      type Outcome = Either.Either<number, EventRefusal>
      const fitted = events.map((e) => fitEventPayload(e.eventType, e.payload, limits.maxEventBytes))
      const taskIds = [...new Set(events.map((e) => e.taskId))]
      const counts = new Map<string, number>()
      const bytes = new Map<string, number>()
      for (const row of yield* sql<{
        readonly task_id: string
        readonly event_count: number
        readonly stored_bytes: number
      }>`
        SELECT task_id, event_count, stored_bytes FROM tasks WHERE ${sql.in("task_id", taskIds)}`) {
        counts.set(row.task_id, row.event_count)
        bytes.set(row.task_id, row.stored_bytes)
      }
      const maxBytes = limits.maxStoredBytesPerTask ?? Number.POSITIVE_INFINITY
      const outcomes: Array<Outcome | undefined> = []
      const accepted: Array<{ readonly index: number; readonly row: Record<string, string> }> = []
      for (const [index, event] of events.entries()) {
        const payload = fitted[index]!
        const count = counts.get(event.taskId)
        const cost =
          payload instanceof AgentEventTooLarge ? 0 : eventStoredBytes(event.eventType, payload.json)
        const stored = bytes.get(event.taskId) ?? 0
        if (payload instanceof AgentEventTooLarge) outcomes.push(Either.left(payload))
        else if (count === undefined) outcomes.push(Either.left(notFound(event.taskId)))
        else if (stored + cost > maxBytes)
          outcomes.push(
            Either.left(
              new AgentEventLimitReached({
                message: `the task has reached its storage share of ${maxBytes} bytes`
              })
            )
          )
        else if (count >= limits.maxEventsPerTask)
          outcomes.push(
            Either.left(
              new AgentEventLimitReached({
                message: `the task has reached its limit of ${limits.maxEventsPerTask} events`
              })
            )
          )
        else {
          counts.set(event.taskId, count + 1)
          bytes.set(event.taskId, stored + cost)
          outcomes.push(undefined)
          accepted.push({
            index,
            row: {
              task_id: event.taskId,
              event_type: event.eventType,
              payload_json: payload.json,
              created_at: now
            }
          })
        }
      }
      for (let from = 0; from < accepted.length; from += INSERT_ROWS) {
        const chunk = accepted.slice(from, from + INSERT_ROWS)
        const inserted = yield* sql<{ readonly event_id: number }>`
          INSERT INTO events ${sql.insert(chunk.map((a) => a.row))} RETURNING event_id`
        // Rows get increasing ids in VALUES order; RETURNING's own order is unspecified.
        const ids = inserted.map((r) => r.event_id).sort((a, b) => a - b)
        if (ids.length !== chunk.length)
          return yield* Effect.dieMessage("appendEvents: INSERT returned too few ids")
        for (const [i, a] of chunk.entries()) outcomes[a.index] = Either.right(ids[i]!)
      }
      for (const [taskId, count] of counts) {
        const stored = bytes.get(taskId) ?? 0
        yield* sql`
          UPDATE tasks SET event_count = ${count}, stored_bytes = ${stored}
          WHERE task_id = ${taskId} AND event_count <> ${count}`
      }
      return outcomes as ReadonlyArray<Outcome>
    })

  const appendEvents = Effect.fn("TaskStore.appendEvents")(function* (
    events: ReadonlyArray<NewEvent>,
    limits: EventLimits
  ) {
    if (events.length === 0) return [] as ReadonlyArray<Either.Either<number, EventRefusal>>
    const now = yield* nowIso
    return yield* mutate(appendWithin(events, limits, now))
  })

  const readEvents = Effect.fn("TaskStore.readEvents")(function* (
    taskId: string,
    afterEventId: number,
    limit: number
  ) {
    if (!Number.isSafeInteger(afterEventId) || afterEventId < 0)
      return yield* new InvalidLimit({ message: "after_event_id must be a non-negative integer" })
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_EVENTS_PAGE)
      return yield* new InvalidLimit({ message: `limit must be between 1 and ${MAX_EVENTS_PAGE}` })
    return yield* read(
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        const rows = yield* sql`
          SELECT event_id, task_id, event_type, payload_json, created_at FROM events
          WHERE task_id = ${taskId} AND event_id > ${afterEventId}
          ORDER BY event_id
          LIMIT ${limit}`
        const decoded = yield* Effect.orDie(Effect.forEach(rows, (row) => decodeEventRow(row)))
        return decoded.map((row) => toEvent(row, task.correlation_id))
      })
    )
  })

  const createPendingRequest = Effect.fn("TaskStore.createPendingRequest")(function* (
    taskId: string,
    kind: RequestKind,
    payload: unknown,
    expiresAt: Instant,
    limits: { readonly maxInteractionBytes: number },
    announce?: EventLimits
  ) {
    const payloadJson = yield* canonical(payload)
    if (utf8Length(payloadJson) > limits.maxInteractionBytes)
      return yield* new AgentInteractionTooLarge({
        message: `the ${kind} payload is larger than ${limits.maxInteractionBytes} bytes`
      })
    const requestId = yield* makeRequestId
    const now = yield* nowIso
    const expires = yield* isoEffect(expiresAt)
    return yield* mutate(
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        if (task.pending_request_id !== null)
          return yield* new RequestPending({ message: "the task already has a pending request" })
        const status = yield* fromEither(
          tableTransition(task.status, kind === "approval" ? "waiting_for_approval" : "waiting_for_question")
        )
        // spec v0.7 §2.2: a request never outlives its task's deadline.
        const effectiveExpiry =
          Date.parse(expires) < Date.parse(task.deadline_at) ? expires : task.deadline_at
        yield* sql`INSERT INTO pending_requests ${sql.insert({
          request_id: requestId,
          task_id: taskId,
          kind,
          status: "pending",
          payload_json: payloadJson,
          created_at: now,
          expires_at: effectiveExpiry,
          resolved_at: null,
          resolution_json: null
        })}`
        yield* writeTask({ ...task, status, updated_at: now, pending_request_id: requestId })
        if (announce !== undefined) {
          // Refusals (the task's event limit) leave the request in place: it is what matters.
          yield* appendWithin(
            [
              {
                taskId,
                eventType: `${kind}.requested`,
                payload: { request_id: requestId, expires_at: effectiveExpiry }
              }
            ],
            announce,
            now
          )
        }
        return { request: yield* storedRequest(requestId), task: yield* storedTask(taskId) }
      })
    )
  })

  const resolveRequest = Effect.fn("TaskStore.resolveRequest")(function* (
    taskId: string,
    requestId: string,
    resolution: unknown,
    limits: { readonly maxInteractionBytes?: number } = {}
  ) {
    const resolutionJson = yield* canonical(resolution)
    if (limits.maxInteractionBytes !== undefined && utf8Length(resolutionJson) > limits.maxInteractionBytes)
      return yield* new AgentInteractionTooLarge({
        message: `the resolution is larger than ${limits.maxInteractionBytes} bytes`
      })
    const now = yield* nowIso
    return yield* mutate(
      Effect.gen(function* () {
        const found = yield* selectRequest(requestId)
        if (Option.isNone(found) || found.value.task_id !== taskId) return yield* requestNotFound(requestId)
        const request = found.value
        if (request.status === "resolved")
          return yield* new RequestAlreadyResolved({ message: `request ${requestId} was already resolved` })
        if (request.status === "stale")
          return yield* new RequestStale({ message: `request ${requestId} is stale` })
        const task = yield* storedTask(taskId)
        if (task.pending_request_id !== requestId)
          return yield* new RequestStale({
            message: `request ${requestId} is not the task's current request`
          })
        if (Date.parse(request.expires_at) <= Date.parse(now))
          return yield* new RequestStale({ message: `request ${requestId} has expired` })
        const status = yield* fromEither(tableTransition(task.status, "running"))
        // The compare-and-set: only a still-pending row flips to resolved. Under BEGIN IMMEDIATE
        // the checks above already saw the final state; this keeps the rule in the statement too.
        const won = yield* sql`
          UPDATE pending_requests
          SET status = 'resolved', resolution_json = ${resolutionJson}, resolved_at = ${now}
          WHERE request_id = ${requestId} AND status = 'pending'
          RETURNING request_id`
        if (won.length !== 1)
          return yield* new RequestAlreadyResolved({ message: `request ${requestId} was already resolved` })
        yield* writeTask({ ...task, status, updated_at: now, pending_request_id: null })
        return { request: yield* storedRequest(requestId), task: yield* storedTask(taskId) }
      })
    )
  })

  const staleRequest = (requestId: string) =>
    mutate(
      Effect.map(
        sql`UPDATE pending_requests SET status = 'stale' WHERE request_id = ${requestId} AND status = 'pending'
            RETURNING request_id`,
        (rows) => rows.length > 0
      )
    ).pipe(Effect.withSpan("TaskStore.staleRequest"))

  const abandonPendingRequest = Effect.fn("TaskStore.abandonPendingRequest")(function* (
    taskId: string,
    requestId: string
  ) {
    const now = yield* nowIso
    return yield* mutate(
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        const found = yield* selectRequest(requestId)
        if (Option.isNone(found) || found.value.task_id !== taskId) return yield* requestNotFound(requestId)
        const staled = yield* sql`
          UPDATE pending_requests SET status = 'stale'
          WHERE request_id = ${requestId} AND status = 'pending'
          RETURNING request_id`
        if (task.pending_request_id === requestId) {
          // The task waits on this request by the store's invariant, so the move back to running
          // is in the table; anything else would be a corrupted row.
          const status = isWaiting(task.status)
            ? yield* Effect.orDie(fromEither(tableTransition(task.status, "running")))
            : task.status
          yield* writeTask({ ...task, status, updated_at: now, pending_request_id: null })
        }
        return { task: yield* storedTask(taskId), staled: staled.length > 0 }
      })
    )
  })

  const getPendingRequest = (requestId: string) => Effect.orDie(selectRequest(requestId))

  const gc = Effect.fn("TaskStore.gc")(function* (options: GcOptions) {
    if (!Number.isFinite(options.retentionSeconds) || options.retentionSeconds < 0)
      return yield* Effect.dieMessage("gc: retentionSeconds must be a non-negative number")
    const now = options.now !== undefined ? yield* isoEffect(options.now) : yield* nowIso
    const cutoff = new Date(Date.parse(now) - options.retentionSeconds * 1000).toISOString()
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
  const taskBytes = sql.literal(
    `stored_bytes + COALESCE(result_size_bytes, 0) + CASE result_storage WHEN 'spool' THEN ${RESULT_PREVIEW_ALLOWANCE_BYTES} ELSE 0 END`
  )

  const storageUsage = (): Effect.Effect<StorageUsage> =>
    Effect.orDie(
      Effect.map(
        sql<{ readonly total: number; readonly active: number; readonly active_tasks: number }>`
          SELECT COALESCE(SUM(${taskBytes}), 0) AS total,
            COALESCE(SUM(CASE WHEN status IN ${sql.in(TERMINAL)} THEN 0 ELSE ${taskBytes} END), 0) AS active,
            COALESCE(SUM(CASE WHEN status IN ${sql.in(TERMINAL)} THEN 0 ELSE 1 END), 0) AS active_tasks
          FROM tasks`,
        (rows) => ({
          totalBytes: rows[0]?.total ?? 0,
          activeBytes: rows[0]?.active ?? 0,
          activeTasks: rows[0]?.active_tasks ?? 0
        })
      )
    )

  // Both read only the covering index tasks_storage (migration 0002), never task rows.
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

  const integrityCheck = () =>
    Effect.orDie(
      Effect.map(sql<Record<string, unknown>>`PRAGMA integrity_check`, (rows) =>
        rows.map((row) => String(Object.values(row)[0]))
      )
    )

  const shape: TaskStoreShape = {
    insertTask,
    getTask,
    findByIdempotencyKey,
    listNonTerminal,
    listTerminalTaskIdsOlderThan,
    transition,
    setNativeIds,
    appendEvent,
    appendEvents,
    readEvents,
    createPendingRequest,
    resolveRequest,
    staleRequest,
    abandonPendingRequest,
    getPendingRequest,
    gc,
    storageUsage,
    evictForBudget,
    integrityCheck
  }
  return shape
})

const verifyWal = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* Effect.orDie(sql<{ readonly journal_mode: string }>`PRAGMA journal_mode`)
  if (rows[0]?.journal_mode !== "wal")
    return yield* Effect.dieMessage("the state database is not in WAL mode")
})

const layerFile = (options: {
  readonly stateDir: string
}): Layer.Layer<TaskStore | ResultSpool, StateDirectoryUnsafe> =>
  Layer.unwrapEffect(
    Effect.map(prepareStateDirectory(options.stateDir), (paths) => {
      const store = Layer.scoped(
        TaskStore,
        Effect.gen(function* () {
          yield* verifyWal
          const shape = yield* makeStore
          // SQLite has now created -wal and -shm; make sure all three are private.
          yield* forceDatabaseModes(paths)
          return shape
        })
      )
      return store.pipe(
        Layer.provide(Layer.orDie(SqliteClient.layer({ filename: paths.database }))),
        Layer.provideMerge(ResultSpool.layer({ stateDir: paths.stateDir }))
      )
    })
  )

const layerMemory = (): Layer.Layer<TaskStore | ResultSpool> =>
  Layer.scoped(TaskStore, makeStore).pipe(
    Layer.provide(Layer.orDie(SqliteClient.layer({ filename: ":memory:" }))),
    Layer.provideMerge(ResultSpool.layerMemory())
  )

export class TaskStore extends Context.Tag("@serverfs/store/TaskStore")<TaskStore, TaskStoreShape>() {
  /**
   * The store in `<stateDir>/state.sqlite3` plus the result spool in `<stateDir>/results/`. The
   * state directory is checked (or created 0700) first; the database closes when the layer's
   * scope ends.
   */
  static readonly layer = layerFile
  /** An in-memory database and spool, for fast unit tests. */
  static readonly layerMemory = layerMemory
}
