import { Schema } from "effect"
import { InvalidLimit, InvalidRequest, LockPathUnsafe } from "../agent/AgentErrors.js"
import { TaskStatus } from "../agent/TaskState.js"
import { DiagnosticsSnapshot, DiagnosticsTaskResult } from "../diagnostics/Catalog.js"
import { WorkdirBusy, WorkdirRecoveryRequired } from "../errors/LeaseErrors.js"
import { WorkdirNotFound } from "../errors/PathErrors.js"
import { errorSet, NoErrors } from "./ErrorSet.js"
import { TaskId } from "./Ids.js"

/**
 * The operator's methods (issue 10): what the `serverfs` CLI needs beyond the task methods —
 * listing tasks, the workdirs' leases and guards, reconciling a guard, the recorder and the
 * metrics. They live on the same socket behind the same peer check; serverfs-mcp never calls
 * them and no MCP tool reaches them.
 */
const Int = Schema.Number.pipe(Schema.int())

/** A task in a listing: its state, never its prompt, model, correlation id or result. */
export const TaskSummary = Schema.Struct({
  task_id: Schema.String,
  runtime: Schema.String,
  workdir_alias: Schema.String,
  workdir_slot: Schema.Number,
  profile: Schema.String,
  status: TaskStatus,
  created_at: Schema.String,
  updated_at: Schema.String,
  completed_at: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.String),
  pending_request_id: Schema.NullOr(Schema.String)
})
export type TaskSummary = typeof TaskSummary.Type

/** Newest first; `limit` 1..500 (default 50). Filters are exact matches; statuses are OR-ed. */
export const TaskListParams = Schema.Struct({
  statuses: Schema.optional(Schema.Array(Schema.String)),
  workdir: Schema.optional(Schema.String),
  runtime: Schema.optional(Schema.String),
  limit: Schema.optional(Int)
})
export const TaskListResult = Schema.Struct({
  tasks: Schema.Array(TaskSummary),
  /** More tasks matched than `limit`. */
  truncated: Schema.Boolean
})
export type TaskListResult = typeof TaskListResult.Type
export const TaskListErrors = errorSet(InvalidRequest, InvalidLimit)

/**
 * One read-write workdir's lease: `free`, `held` by one of this bridge's tasks (`task_id`), or
 * `held_elsewhere` (a writer this bridge does not own: an MCP mutation in flight, another
 * process); and its recovery guard: `none`, `valid` (naming `guard_task_id`) or `invalid`.
 */
export const LeaseStatus = Schema.Struct({
  slot: Schema.Number,
  workdir_alias: Schema.String,
  lease: Schema.Literal("free", "held", "held_elsewhere"),
  task_id: Schema.NullOr(Schema.String),
  guard: Schema.Literal("none", "valid", "invalid"),
  guard_task_id: Schema.NullOr(Schema.String),
  guard_task_status: Schema.NullOr(TaskStatus)
})
export type LeaseStatus = typeof LeaseStatus.Type
export const LeaseListParams = Schema.Struct({})
export const LeaseListResult = Schema.Struct({ workdirs: Schema.Array(LeaseStatus) })
export type LeaseListResult = typeof LeaseListResult.Type
export const LeaseListErrors = errorSet(LockPathUnsafe)

/**
 * Reconcile one slot's recovery guard (the supported replacement of removing the file by hand):
 * refused with WORKDIR_BUSY while a live writer holds the lease; with the lease held, a guard
 * whose provider run is proven stopped is removed (its task, if still live in the store, is
 * interrupted). A run that cannot be proven stopped — or an unreadable guard — stays
 * WORKDIR_RECOVERY_REQUIRED unless `force` says the operator has checked it themselves.
 */
export const LeaseRecoverParams = Schema.Struct({
  slot: Int,
  force: Schema.optional(Schema.Boolean)
})
export const LeaseRecoverResult = Schema.Struct({
  slot: Schema.Number,
  workdir_alias: Schema.String,
  outcome: Schema.Literal("cleared", "no_guard"),
  /** How the guard's run was judged stopped: reconciled by its runtime, or the operator's word. */
  proof: Schema.NullOr(Schema.Literal("reconciled", "forced")),
  task_id: Schema.NullOr(Schema.String),
  task_status: Schema.NullOr(TaskStatus)
})
export type LeaseRecoverResult = typeof LeaseRecoverResult.Type
export const LeaseRecoverErrors = errorSet(
  InvalidRequest,
  WorkdirNotFound,
  WorkdirBusy,
  WorkdirRecoveryRequired,
  LockPathUnsafe
)

export const DiagnosticsSnapshotParams = Schema.Struct({})
export const DiagnosticsTaskParams = Schema.Struct({ task_id: TaskId })

/** One metric series: a name from the fixed catalog, bounded labels, its current value. */
export const MetricSeries = Schema.Struct({
  name: Schema.String,
  kind: Schema.Literal("counter", "gauge", "histogram"),
  labels: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** Counter and gauge value; a histogram's observation count. */
  value: Schema.Number,
  sum: Schema.optional(Schema.Number),
  /** A histogram's cumulative buckets: [upper bound, count]. */
  buckets: Schema.optional(Schema.Array(Schema.Tuple(Schema.Number, Schema.Number)))
})
export type MetricSeries = typeof MetricSeries.Type
export const MetricsSnapshotParams = Schema.Struct({})
export const MetricsSnapshotResult = Schema.Struct({
  started_at: Schema.String,
  series: Schema.Array(MetricSeries)
})
export type MetricsSnapshotResult = typeof MetricsSnapshotResult.Type

export const OPERATOR_METHODS = {
  "task.list": { params: TaskListParams, result: TaskListResult, errors: TaskListErrors },
  "lease.list": { params: LeaseListParams, result: LeaseListResult, errors: LeaseListErrors },
  "lease.recover": { params: LeaseRecoverParams, result: LeaseRecoverResult, errors: LeaseRecoverErrors },
  "diagnostics.snapshot": {
    params: DiagnosticsSnapshotParams,
    result: DiagnosticsSnapshot,
    errors: NoErrors
  },
  "diagnostics.task": { params: DiagnosticsTaskParams, result: DiagnosticsTaskResult, errors: NoErrors },
  "metrics.snapshot": { params: MetricsSnapshotParams, result: MetricsSnapshotResult, errors: NoErrors }
} as const
