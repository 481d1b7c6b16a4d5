import type { EventLimits, EventRefusal, NewEvent, TaskStoreShape } from "@serverfs/store"
import { Cause, type Chunk, Deferred, Effect, Either, Queue, type Scope } from "effect"

/**
 * The single writer of task events (group commit). Events are queued in the order they happen
 * and one fiber commits whatever has accumulated — across all tasks — in one transaction, so a
 * provider streaming deltas never waits for a commit of its own, and tasks running side by side
 * share commits instead of taking turns at the write lock.
 *
 * Order is the queue's: an event of a task is committed after every event queued before it.
 * Anything that changes a task's state (a status, a pending request) first `flush`es, so no
 * reader ever sees a state that is newer than the task's events.
 */
export interface EventWriter {
  /** Queue an event and return at once (waiting only while the queue is full). */
  readonly enqueue: (event: NewEvent) => Effect.Effect<void>
  /** Queue an event and wait until it is committed (or refused). */
  readonly append: (event: NewEvent) => Effect.Effect<void>
  /** Wait until every event queued before this call is committed (or refused). */
  readonly flush: Effect.Effect<void>
}

export interface EventWriterOptions {
  readonly limits: EventLimits
  /** An event the store refused (too large, over the task's limit, task gone): it is dropped. */
  readonly onRefused: (event: NewEvent, refusal: EventRefusal) => Effect.Effect<void>
  /**
   * A batch the database could not write (disk full, I/O error): its events are lost, the writer
   * goes on. `errorCode` is SQLite's code (SQLITE_FULL, …), never a message that could hold a path.
   */
  readonly onFailure: (events: number, errorCode: string) => Effect.Effect<void>
}

/** Events waiting at most; a producer beyond this waits for the writer (backpressure). */
const QUEUE_CAPACITY = 4096
/** Events per transaction at most, so that one commit never holds the write lock for long. */
const MAX_BATCH = 512

/** The SQLite error code somewhere in a failure's chain of causes, or UNKNOWN. */
const sqliteCodeOf = (cause: Cause.Cause<unknown>): string => {
  let error: unknown = Cause.squash(cause)
  for (let depth = 0; depth < 4 && typeof error === "object" && error !== null; depth++) {
    const code = (error as { readonly code?: unknown }).code
    if (typeof code === "string" && /^SQLITE_[A-Z_]+$/.test(code)) return code
    error = (error as { readonly cause?: unknown }).cause
  }
  return "UNKNOWN"
}

type Entry =
  | { readonly _tag: "event"; readonly event: NewEvent; readonly done: Deferred.Deferred<void> | undefined }
  | { readonly _tag: "barrier"; readonly done: Deferred.Deferred<void> }

export const makeEventWriter = (
  store: TaskStoreShape,
  options: EventWriterOptions
): Effect.Effect<EventWriter, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.bounded<Entry>(QUEUE_CAPACITY)

    const write = (entries: Chunk.Chunk<Entry>): Effect.Effect<void> =>
      Effect.gen(function* () {
        const events: NewEvent[] = []
        for (const entry of entries) if (entry._tag === "event") events.push(entry.event)
        if (events.length > 0) {
          const outcomes = yield* store
            .appendEvents(events, options.limits)
            .pipe(
              Effect.catchAllCause((cause) =>
                Effect.as(options.onFailure(events.length, sqliteCodeOf(cause)), [] as ReadonlyArray<never>)
              )
            )
          for (const [i, outcome] of outcomes.entries()) {
            if (Either.isLeft(outcome)) yield* options.onRefused(events[i]!, outcome.left)
          }
        }
        for (const entry of entries)
          if (entry.done !== undefined) yield* Deferred.succeed(entry.done, undefined)
      })

    // Finalizers run in reverse order: the last flush, then the writer's interruption, then the
    // queue's shutdown — all after every finalizer the owner adds later (those may still emit a
    // task's last events).
    yield* Effect.addFinalizer(() => Queue.shutdown(queue))
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.takeBetween(queue, 1, MAX_BATCH), write)))

    const waitFor = (entry: (done: Deferred.Deferred<void>) => Entry): Effect.Effect<void> =>
      Effect.flatMap(Deferred.make<void>(), (done) =>
        Effect.zipRight(Queue.offer(queue, entry(done)), Deferred.await(done))
      )
    const flush = waitFor((done) => ({ _tag: "barrier", done }))
    yield* Effect.addFinalizer(() => flush)

    return {
      enqueue: (event) => Effect.asVoid(Queue.offer(queue, { _tag: "event", event, done: undefined })),
      append: (event) => waitFor((done) => ({ _tag: "event", event, done })),
      flush
    } satisfies EventWriter
  })
