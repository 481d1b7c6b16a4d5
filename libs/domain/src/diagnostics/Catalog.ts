import { Schema } from "effect"
import { TaskStatus } from "../agent/TaskState.js"

/**
 * Diagnostics catalog v1 (spec v0.22 §5–§8): the closed vocabularies and the JSON the bridge's
 * recorder answers with. JSON is the contract; the CLI's human text is a rendering of it. No
 * field here may carry a task's prompt, path, workdir, model, session, correlation id or any
 * free text: every value is a number, a timestamp or one of the literals below.
 */
export const CATALOG_VERSION = 1 as const
const CatalogVersion = Schema.Literal(CATALOG_VERSION)

/** The frozen capacities (spec v0.22 §7.1); not configuration. */
export const DIAGNOSTIC_LIMITS = {
  maxRecords: 2_048,
  maxBytes: 1_048_576,
  maxTaskRecords: 64,
  maxTaskBytes: 32_768,
  maxOperationBytes: 1_024,
  sealReservedBytes: 512
} as const

/** Operation kinds (§5.1). `agent.task` is the logical root and is never a record. */
export const OperationKind = Schema.Literal(
  "agent.queue_wait",
  "agent.lease_acquire",
  "agent.runtime_start",
  "agent.execution",
  "agent.waiting_external",
  "agent.finalization",
  "agent.recovery"
)
export type OperationKind = typeof OperationKind.Type

/** The v0.21 runtime-family domain: a runtime the bridge does not name as a family is `unknown`. */
export const RuntimeFamily = Schema.Literal("codex", "claude", "qoder", "acp", "unknown")
export type RuntimeFamily = typeof RuntimeFamily.Type
export const runtimeFamilyOf = (runtime: string): RuntimeFamily =>
  runtime === "codex" || runtime === "claude" ? runtime : "unknown"

/** Writer-lease acquisition outcomes (the metric's and the operation's; §5.3, §9.1). */
export const LeaseOutcome = Schema.Literal("acquired", "busy", "recovery_required", "failure")
export type LeaseOutcome = typeof LeaseOutcome.Type

/** Restart-recovery outcomes, one per task reconciled (metric and `agent.recovery`). */
export const RecoveryOutcome = Schema.Literal(
  "interrupted",
  "timed_out",
  "guard_cleared",
  "guard_kept",
  "reconcile_failed",
  // The task's live provider turn was re-attached (bridge-internals §10 REATTACHED): it goes on.
  "reattached"
)
export type RecoveryOutcome = typeof RecoveryOutcome.Type

/** An operation's bounded outcome, where one is meaningful. */
export const OperationOutcome = Schema.Union(
  LeaseOutcome,
  RecoveryOutcome,
  Schema.Literal("ok", "error", "cancelled", "expired", "stale")
)
export type OperationOutcome = typeof OperationOutcome.Type

export const InteractionClass = Schema.Literal("approval", "question")
export type InteractionClass = typeof InteractionClass.Type

export const TerminalOutcome = Schema.Literal("succeeded", "failed", "cancelled", "interrupted")
export type TerminalOutcome = typeof TerminalOutcome.Type

/** The seal's coarse reason (§5.2): never an arbitrary error code. */
export const SealReason = Schema.Literal("ok", "safe", "degraded", "unavailable")
export type SealReason = typeof SealReason.Type
export const sealReasonOf = (outcome: TerminalOutcome): SealReason =>
  outcome === "succeeded"
    ? "ok"
    : outcome === "cancelled"
      ? "safe"
      : outcome === "failed"
        ? "degraded"
        : "unavailable"

export const Completeness = Schema.Literal(
  "complete",
  "truncated_prefix",
  "restarted",
  "restarted_truncated_prefix"
)
export type Completeness = typeof Completeness.Type

export const NotRetainedReason = Schema.Literal(
  "evicted",
  "bridge_restarted",
  "capacity_exhausted",
  "recording_unavailable"
)
export type NotRetainedReason = typeof NotRetainedReason.Type

/** One retained operation; times in seconds, offsets from the trace's staging instant. */
export const DiagnosticOperation = Schema.Struct({
  sequence: Schema.Number,
  kind: OperationKind,
  start_offset_seconds: Schema.Number,
  duration_seconds: Schema.Number,
  outcome: Schema.optional(OperationOutcome),
  interaction: Schema.optional(InteractionClass)
})
export type DiagnosticOperation = typeof DiagnosticOperation.Type

/** The terminal seal (§6): written exactly once per admitted task. */
export const DiagnosticSeal = Schema.Struct({
  outcome: TerminalOutcome,
  reason_code: SealReason,
  wall_clock_seconds: Schema.Number,
  completed_at: Schema.String
})
export type DiagnosticSeal = typeof DiagnosticSeal.Type

/** §5.3: accounted sums leaf operations only; unaccounted = wall clock − accounted, unclamped. */
export const DiagnosticRollups = Schema.Struct({
  wall_clock_seconds: Schema.Number,
  accounted_seconds: Schema.Number,
  unaccounted_seconds: Schema.Number,
  active_execution_seconds: Schema.Number,
  external_wait_seconds: Schema.Number,
  lease_wait_seconds: Schema.Number
})
export type DiagnosticRollups = typeof DiagnosticRollups.Type

/** A retained trace as the recorder projects it (the envelope adds identity and status). */
export const TaskTrace = Schema.Struct({
  runtime_family: RuntimeFamily,
  completeness: Completeness,
  operations: Schema.Array(DiagnosticOperation),
  seal: Schema.NullOr(DiagnosticSeal),
  rollups: DiagnosticRollups
})
export type TaskTrace = typeof TaskTrace.Type

/** `diagnostics.task` (§8.2). `bridge_unavailable` is the CLI's own disposition, never the bridge's. */
export const DiagnosticsTaskResult = Schema.Union(
  Schema.Struct({
    catalog_version: CatalogVersion,
    disposition: Schema.Literal("available"),
    task_id: Schema.String,
    status: TaskStatus,
    ...TaskTrace.fields
  }),
  Schema.Struct({
    catalog_version: CatalogVersion,
    disposition: Schema.Literal("unknown_task"),
    task_id: Schema.String
  }),
  Schema.Struct({
    catalog_version: CatalogVersion,
    disposition: Schema.Literal("not_retained"),
    task_id: Schema.String,
    reason: Schema.optional(NotRetainedReason)
  })
)
export type DiagnosticsTaskResult = typeof DiagnosticsTaskResult.Type

export const RecorderCounters = Schema.Struct({
  record_failures: Schema.Number,
  admission_failures: Schema.Number,
  ordinary_records_dropped: Schema.Number,
  truncated_tasks: Schema.Number,
  oversized_rejections: Schema.Number,
  evictions: Schema.Number
})
export type RecorderCounters = typeof RecorderCounters.Type

/** The recorder's own state (§8.1): aggregates only — no task, trace or span identity. */
export const RecorderState = Schema.Struct({
  generation_started_at: Schema.String,
  retained_records: Schema.Number,
  retained_bytes: Schema.Number,
  retained_tasks: Schema.Number,
  active_tasks: Schema.Number,
  terminal_tasks: Schema.Number,
  counters: RecorderCounters
})
export type RecorderState = typeof RecorderState.Type

/** `diagnostics.snapshot` (§8.1). */
export const DiagnosticsSnapshot = Schema.Struct({
  catalog_version: CatalogVersion,
  limits: Schema.Struct({
    max_records: Schema.Number,
    max_bytes: Schema.Number,
    max_task_records: Schema.Number,
    max_task_bytes: Schema.Number,
    max_operation_bytes: Schema.Number,
    seal_reserved_bytes: Schema.Number
  }),
  ...RecorderState.fields,
  /** Durable tasks older than this generation exist: their history before it is not here. */
  durable_tasks_predate_generation: Schema.Boolean
})
export type DiagnosticsSnapshot = typeof DiagnosticsSnapshot.Type
