import { Schema } from "effect"

/**
 * The event envelope, schema_version 1 (spec v0.7 §2.1): `event_id` is one global
 * autoincrement shared by all tasks, so a cursor read is gap-free per task in id order;
 * `correlation_id` is copied from the task. Payloads are normalized and redacted; token-by-token
 * deltas are never persisted.
 */
export const TaskEvent = Schema.Struct({
  event_id: Schema.Number,
  task_id: Schema.String,
  correlation_id: Schema.NullOr(Schema.String),
  event_type: Schema.String,
  payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.String,
  schema_version: Schema.Literal(1)
})
export type TaskEvent = typeof TaskEvent.Type
