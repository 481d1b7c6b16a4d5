export {
  type FittedPayload,
  fitEventPayload,
  SHRINKABLE_EVENT_TYPE
} from "./EventPayload.js"
export { makeImmediateTransaction } from "./ImmediateTransaction.js"
export {
  EVENT_ROW_OVERHEAD_BYTES,
  MIGRATIONS_TABLE,
  migrations,
  RESULT_PREVIEW_ALLOWANCE_BYTES,
  runMigrations
} from "./Migrations.js"
export { PendingRequestRecord } from "./PendingRequestRecord.js"
export {
  chunkAt,
  RESULTS_DIRECTORY,
  type ReadResultError,
  type ResultChunk,
  ResultSpool,
  type ResultSpoolShape,
  type SpooledResult
} from "./ResultSpool.js"
export {
  checkStateDirectory,
  DATABASE_COMPANIONS,
  DATABASE_FILE,
  forceDatabaseModes,
  prepareStateDirectory,
  type StatePaths
} from "./StateDirectory.js"
export { type TaskListing, type TaskListQuery, TaskListRow } from "./TaskListing.js"
export {
  isTaskId,
  makeRequestId,
  makeTaskId,
  type NewTask,
  ResultStorage,
  TASK_ID_PATTERN,
  TaskRecord,
  type TransitionPatch
} from "./TaskRecord.js"
export { TaskStore } from "./TaskStore.js"
export {
  type AbandonResult,
  type BudgetOptions,
  type BudgetOutcome,
  type EventLimits,
  type EventRefusal,
  eventStoredBytes,
  type GcOptions,
  type Instant,
  type NewEvent,
  type RequestChange,
  type RetentionCheck,
  type StorageUsage,
  type TaskStoreShape,
  type TransitionEvent,
  type TransitionResult
} from "./TaskStoreShape.js"
export {
  boundaryAtOrBefore,
  completeCharactersEnd,
  decodeUtf8,
  isContinuationByte,
  utf8Bytes,
  utf8Length,
  utf8Prefix
} from "./Utf8.js"
