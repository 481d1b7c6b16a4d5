import type {
  AgentEventLimitReached,
  AgentEventTooLarge,
  AgentIdempotencyConflict,
  AgentInteractionTooLarge,
  AgentTaskExists,
  AgentTaskLimitReached,
  AgentTaskNotFound,
  InvalidLimit,
  InvalidTaskTransition,
  RequestAlreadyResolved,
  RequestKind,
  RequestNotFound,
  RequestPending,
  RequestStale,
  TaskEvent,
  TaskStatus
} from "@serverfs/domain"
import type { Effect, Either, Option } from "effect"
import { EVENT_ROW_OVERHEAD_BYTES } from "./Migrations.js"
import type { PendingRequestRecord } from "./PendingRequestRecord.js"
import type { TaskListing, TaskListQuery } from "./TaskListing.js"
import type { NewTask, TaskRecord, TransitionPatch } from "./TaskRecord.js"
import { utf8Length } from "./Utf8.js"

/**
 * The TaskStore's contract (bridge-internals §5–§7, spec v0.7): what the bridge may ask of its
 * durable state, and the records and options those methods exchange. The implementation is split
 * by concern (TaskRows, EventLog, PendingRequests, Retention) and assembled in TaskStore.ts.
 */

/** A point in time given to the store: a Date or an ISO-8601 string. */
export type Instant = Date | string

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

/** The retention check of a submit or a task's end, read in one statement. */
export interface RetentionCheck {
  /** Whether some finished task completed before the cutoff: collection is due. */
  readonly expired: boolean
  readonly usage: StorageUsage
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
  /** The operator's listing: newest first, filtered, bounded by `limit` (TaskListing.ts). */
  readonly listTasks: (query: TaskListQuery) => Effect.Effect<TaskListing>
  /** Terminal tasks with completed_at < cutoff, oldest first. */
  readonly listTerminalTaskIdsOlderThan: (cutoff: Instant) => Effect.Effect<ReadonlyArray<string>>
  /** Whether any task was created before `moment` (TaskAge.ts: the diagnostics generation probe). */
  readonly hasTaskCreatedBefore: (moment: Instant) => Effect.Effect<boolean>
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
  /** The bytes the state holds for its tasks (events and results): one row kept by triggers. */
  readonly storageUsage: () => Effect.Effect<StorageUsage>
  /**
   * Whether a finished task completed before `cutoff`, and the storage usage, in one statement:
   * what every submit and every task's end check first (bridge-internals §3).
   */
  readonly retentionCheck: (cutoff: Instant) => Effect.Effect<RetentionCheck>
  /**
   * Evict finished tasks, oldest completion first (never an active or a protected one), until
   * usage + reserve fits the budget or nothing evictable is left. Each goes whole, as in `gc`.
   */
  readonly evictForBudget: (options: BudgetOptions) => Effect.Effect<BudgetOutcome>
  /** `PRAGMA integrity_check`: `["ok"]` for a sound database. */
  readonly integrityCheck: () => Effect.Effect<ReadonlyArray<string>>
}
