import {
  AgentEventLimitReached,
  AgentEventTooLarge,
  InvalidLimit,
  MAX_EVENTS_PAGE,
  type TaskEvent
} from "@serverfs/domain"
import { Effect, Either, Schema } from "effect"
import { fitEventPayload } from "./EventPayload.js"
import { notFound, nowIso, type StoreContext } from "./StoreContext.js"
import { type EventLimits, type EventRefusal, eventStoredBytes, type NewEvent } from "./TaskStoreShape.js"

/** A task's event count and stored bytes, as its row holds them: what its appends are checked against. */
export interface EventTally {
  readonly eventCount: number
  readonly storedBytes: number
}

/**
 * The global event log (bridge-internals §6–§7.1): appends fitted to the size limit and counted
 * against the task's event and byte shares, and pages read in event-id order. `appendWithin` runs
 * inside a caller's transaction, so a status change and its event commit together.
 */

/** Rows per multi-row event INSERT: 4 parameters each, well under SQLite's 32766. */
const INSERT_ROWS = 500

/** A stored payload is the canonical JSON of an object (EventPayload): decoded, never cast. */
const EventRow = Schema.Struct({
  event_id: Schema.Int,
  task_id: Schema.String,
  event_type: Schema.String,
  payload_json: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  created_at: Schema.String
})
const decodeEventRow = Schema.decodeUnknown(EventRow)

const toEvent = (row: typeof EventRow.Type, correlationId: string | null): TaskEvent => ({
  schema_version: 1,
  event_id: row.event_id,
  task_id: row.task_id,
  correlation_id: correlationId,
  event_type: row.event_type,
  payload: row.payload_json,
  created_at: row.created_at
})

type Outcome = Either.Either<number, EventRefusal>

export const makeEventLog = (ctx: StoreContext) => {
  const { sql, mutate, read, requireTask, storedTask } = ctx

  /** Each task's tally as stored; a task missing here does not exist. */
  const readTallies = (taskIds: ReadonlyArray<string>) =>
    Effect.map(
      sql<{ readonly task_id: string; readonly event_count: number; readonly stored_bytes: number }>`
        SELECT task_id, event_count, stored_bytes FROM tasks WHERE ${sql.in("task_id", taskIds)}`,
      (rows) =>
        new Map<string, EventTally>(
          rows.map((row) => [row.task_id, { eventCount: row.event_count, storedBytes: row.stored_bytes }])
        )
    )

  /**
   * Events inserted inside the caller's transaction, in order, checked against each task's tally
   * in `tallies` (a task not there does not exist): every accepted event in multi-row INSERTs.
   * Each entry gets its own outcome; `tallies` comes back as the accepted events left it, for
   * the caller to write. Nothing here writes a task row.
   */
  const insertWithin = (
    events: ReadonlyArray<NewEvent>,
    limits: EventLimits,
    now: string,
    tallies: ReadonlyMap<string, EventTally>
  ) =>
    Effect.gen(function* () {
      const after = new Map(tallies)
      const maxBytes = limits.maxStoredBytesPerTask ?? Number.POSITIVE_INFINITY
      const outcomes: Array<Outcome> = []
      const accepted: Array<{ readonly index: number; readonly row: Record<string, string> }> = []
      for (const [index, event] of events.entries()) {
        const payload = fitEventPayload(event.eventType, event.payload, limits.maxEventBytes)
        const tally = after.get(event.taskId)
        const cost =
          payload instanceof AgentEventTooLarge ? 0 : eventStoredBytes(event.eventType, payload.json)
        if (payload instanceof AgentEventTooLarge) outcomes.push(Either.left(payload))
        else if (tally === undefined) outcomes.push(Either.left(notFound(event.taskId)))
        else if (tally.storedBytes + cost > maxBytes)
          outcomes.push(
            Either.left(
              new AgentEventLimitReached({
                message: `the task has reached its storage share of ${maxBytes} bytes`
              })
            )
          )
        else if (tally.eventCount >= limits.maxEventsPerTask)
          outcomes.push(
            Either.left(
              new AgentEventLimitReached({
                message: `the task has reached its limit of ${limits.maxEventsPerTask} events`
              })
            )
          )
        else {
          after.set(event.taskId, { eventCount: tally.eventCount + 1, storedBytes: tally.storedBytes + cost })
          // Replaced by the event id once the INSERT below has returned it.
          outcomes.push(Either.right(0))
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
      return { outcomes, tallies: after }
    })

  /**
   * Events appended inside the caller's transaction, in order: one tally read per task, every
   * accepted event in multi-row INSERTs, one tally write per task that took events — a handful
   * of statements per batch, not several per event. Each entry gets its own outcome.
   */
  const appendWithin = (events: ReadonlyArray<NewEvent>, limits: EventLimits, now: string) =>
    Effect.gen(function* () {
      const before = yield* readTallies([...new Set(events.map((e) => e.taskId))])
      const { outcomes, tallies } = yield* insertWithin(events, limits, now, before)
      for (const [taskId, tally] of tallies) {
        if (tally.eventCount === before.get(taskId)?.eventCount) continue
        yield* sql`
          UPDATE tasks SET event_count = ${tally.eventCount}, stored_bytes = ${tally.storedBytes}
          WHERE task_id = ${taskId}`
      }
      return outcomes
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

  const appendEvents = Effect.fn("TaskStore.appendEvents")(function* (
    events: ReadonlyArray<NewEvent>,
    limits: EventLimits
  ) {
    if (events.length === 0) return [] as ReadonlyArray<Outcome>
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

  return { insertWithin, appendWithin, appendEvent, appendEvents, readEvents }
}

export type EventLog = ReturnType<typeof makeEventLog>
