import { Schema } from "effect"

/**
 * The persistent active-slot guard (spec v0.7 §2.3, bridge-internals §9): published when a
 * workspace-write task is scheduled, it survives a bridge crash so MCP mutations fail closed
 * with WORKDIR_RECOVERY_REQUIRED until reconciliation proves the old provider run stopped.
 */
export const RecoveryGuard = Schema.Struct({
  schema_version: Schema.Literal(1),
  slot: Schema.Number,
  task_id: Schema.String,
  runtime: Schema.String,
  workdir_alias: Schema.String,
  correlation_id: Schema.NullOr(Schema.String),
  native_session_id: Schema.NullOr(Schema.String),
  native_turn_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type RecoveryGuard = typeof RecoveryGuard.Type
