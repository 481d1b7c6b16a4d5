import { Schema } from "effect"
import { PendingRequestView } from "./Interactions.js"
import { Manifest } from "./Manifest.js"
import { TaskStatus } from "./TaskState.js"

/**
 * A task as clients see it (bridge-internals §6 "Task view"): the stored record without native
 * ids or the request fingerprint, the result's storage summarised, the pending request inline.
 */
export const ResultSummary = Schema.Struct({
  storage: Schema.Literal("inline", "spool"),
  size_bytes: Schema.Number,
  sha256: Schema.String,
  retrievable: Schema.Boolean
})
export type ResultSummary = typeof ResultSummary.Type

export const TaskView = Schema.Struct({
  task_id: Schema.String,
  runtime: Schema.String,
  workdir_alias: Schema.String,
  workdir_slot: Schema.Number,
  relative_cwd: Schema.String,
  profile: Schema.String,
  status: TaskStatus,
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  updated_at: Schema.String,
  completed_at: Schema.NullOr(Schema.String),
  deadline_at: Schema.String,
  continue_from_task_id: Schema.NullOr(Schema.String),
  correlation_id: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  requested_model: Schema.NullOr(Schema.String),
  final_response: Schema.NullOr(Schema.String),
  final_response_truncated: Schema.Boolean,
  result: Schema.NullOr(ResultSummary),
  manifest: Manifest,
  manifest_sha256: Schema.String,
  error_code: Schema.NullOr(Schema.String),
  error_message: Schema.NullOr(Schema.String),
  pending_request_id: Schema.NullOr(Schema.String),
  pending_request: Schema.optional(PendingRequestView)
})
export type TaskView = typeof TaskView.Type
