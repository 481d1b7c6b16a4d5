import { randomBytes } from "node:crypto"
import type { Manifest } from "@serverfs/domain"
import { TaskStatus } from "@serverfs/domain"
import { Effect, Schema } from "effect"

/**
 * One row of `tasks` (bridge-internals §5), field for field: records keep the column names
 * (snake_case) because they are what the task view and the wire carry; method options are
 * camelCase. Times are UTC ISO-8601 with milliseconds and a trailing "Z".
 */
export const ResultStorage = Schema.Literal("inline", "spool")
export type ResultStorage = typeof ResultStorage.Type

const NullableString = Schema.NullOr(Schema.String)
const NullableInt = Schema.NullOr(Schema.Int)

export const TaskRecord = Schema.Struct({
  task_id: Schema.String,
  runtime: Schema.String,
  workdir_alias: Schema.String,
  workdir_slot: Schema.Int,
  relative_cwd: Schema.String,
  profile: Schema.String,
  status: TaskStatus,
  created_at: Schema.String,
  started_at: NullableString,
  updated_at: Schema.String,
  completed_at: NullableString,
  deadline_at: Schema.String,
  continue_from_task_id: NullableString,
  correlation_id: NullableString,
  idempotency_key: NullableString,
  request_fingerprint: Schema.String,
  requested_model: NullableString,
  native_session_id: NullableString,
  native_turn_id: NullableString,
  final_response: NullableString,
  result_storage: Schema.NullOr(ResultStorage),
  result_size_bytes: NullableInt,
  result_sha256: NullableString,
  manifest_json: Schema.String,
  manifest_sha256: Schema.String,
  error_code: NullableString,
  error_message: NullableString,
  pending_request_id: NullableString,
  event_count: Schema.Int
})
export type TaskRecord = typeof TaskRecord.Type

/**
 * What the submit flow supplies when it inserts a task. The store adds the rest: status
 * `queued`, `created_at`/`updated_at` from the Clock, the canonical `manifest_json` and its
 * SHA-256, and nulls/zero for everything that only a later step fills in.
 */
export interface NewTask {
  readonly task_id: string
  readonly runtime: string
  readonly workdir_alias: string
  readonly workdir_slot: number
  readonly relative_cwd: string
  readonly profile: string
  readonly deadline_at: string
  readonly continue_from_task_id: string | null
  readonly correlation_id: string | null
  readonly idempotency_key: string | null
  readonly request_fingerprint: string
  readonly requested_model: string | null
  readonly manifest: Manifest
}

/**
 * Columns a status transition may set besides the status itself. `updated_at` is always set;
 * `completed_at` is set by every terminal transition; `started_at` defaults to the transition
 * time on the first move to `starting` unless given here.
 */
export interface TransitionPatch {
  readonly started_at?: string
  readonly error_code?: string | null
  readonly error_message?: string | null
  readonly final_response?: string | null
  readonly result_storage?: ResultStorage | null
  readonly result_size_bytes?: number | null
  readonly result_sha256?: string | null
  readonly native_session_id?: string | null
  readonly native_turn_id?: string | null
}

/** `agt_` + 24 lowercase hex (spec v0.3): the only shape of a task id, checked before any file name is built. */
export const TASK_ID_PATTERN = /^agt_[0-9a-f]{24}$/

export const isTaskId = (value: string): boolean => TASK_ID_PATTERN.test(value)

export const makeTaskId: Effect.Effect<string> = Effect.sync(() => `agt_${randomBytes(12).toString("hex")}`)
export const makeRequestId: Effect.Effect<string> = Effect.sync(
  () => `req_${randomBytes(12).toString("hex")}`
)
