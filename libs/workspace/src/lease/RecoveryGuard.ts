import { Schema } from "effect"

/**
 * The persistent active-slot guard (spec v0.7 §2.3, bridge-internals §9): published when a
 * workspace-write task is scheduled, it survives a bridge crash so MCP mutations fail closed
 * with WORKDIR_RECOVERY_REQUIRED until reconciliation proves the old provider run stopped.
 * It lives with the lease because both roles read the same file: the bridge writes and
 * reconciles it, serverfs-mcp only tests for it.
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

/** The guard file's text: one JSON object (decoded with Schema, never `JSON.parse(x) as T`). */
export const RecoveryGuardJson = Schema.parseJson(RecoveryGuard)

/**
 * A guard is a few hundred bytes; anything much larger is not one of ours. Reading stops here,
 * so a planted multi-gigabyte file costs one bounded read, and is treated as malformed.
 */
export const MAX_GUARD_BYTES = 16 * 1024
