import type {
  Completeness,
  DiagnosticOperation,
  DiagnosticRollups,
  DiagnosticSeal,
  InteractionClass,
  OperationKind,
  OperationOutcome,
  RuntimeFamily,
  TaskTrace
} from "@serverfs/domain"
import type { TraceContext } from "./StagingContext.js"

/** An open segment (begin … end): when it started and, for an external wait, its class. */
export interface OpenSegment {
  readonly startMs: number
  readonly interaction: InteractionClass | undefined
}

/** Milliseconds to seconds at microsecond resolution: enough, and it keeps the JSON short. */
export const seconds = (ms: number): number => Math.round(ms * 1000) / 1e6

/**
 * One retained operation exactly as it is projected (its JSON is its logical size, §7.1). Keys
 * without a value are left out, not set to undefined, so the record and its projection agree.
 */
export const operationOf = (
  sequence: number,
  kind: OperationKind,
  startOffsetMs: number,
  durationMs: number,
  outcome: OperationOutcome | undefined,
  interaction: InteractionClass | undefined
): DiagnosticOperation => {
  const base = {
    sequence,
    kind,
    start_offset_seconds: seconds(startOffsetMs),
    duration_seconds: seconds(durationMs)
  }
  if (outcome === undefined) return interaction === undefined ? base : { ...base, interaction }
  return interaction === undefined ? { ...base, outcome } : { ...base, outcome, interaction }
}

/**
 * One admitted task's trace: its retained prefix of operations, its open segments, its seal.
 * Charged against the budgets as (operations + 1) records and (operation bytes + the seal's
 * bytes, or its 512-byte reservation until it is written) bytes.
 */
export class TraceSlot {
  readonly operations: Array<DiagnosticOperation> = []
  ordinaryBytes = 0
  /** Ordinary recording stopped (a budget, an oversized operation): it never restarts. */
  truncated = false
  seal: DiagnosticSeal | undefined = undefined
  sealBytes = 0
  /** At most one open segment per kind: a handful of entries at most. */
  readonly open = new Map<OperationKind, OpenSegment>()

  constructor(
    readonly taskId: string,
    readonly runtime: RuntimeFamily,
    /** Admitted for a task that predates this process (§6.1): never `complete`. */
    readonly restarted: boolean,
    /** Monotonic ms of the staging (or restarted admission): offsets and wall clock start here. */
    readonly originMs: number,
    readonly trace: TraceContext
  ) {}
}

const completenessOf = (slot: TraceSlot): Completeness =>
  slot.restarted
    ? slot.truncated
      ? "restarted_truncated_prefix"
      : "restarted"
    : slot.truncated
      ? "truncated_prefix"
      : "complete"

/**
 * §5.3 rollups. Every retained operation is a leaf (`agent.task` is never a record), so
 * accounted is their sum; unaccounted = wall clock − accounted, NOT clamped: a negative value
 * is the evidence that measured leaves overlap. Lease wait counts acquired acquisitions only
 * (`busy` is a rejection, not a wait).
 */
export const rollupsOf = (
  operations: ReadonlyArray<DiagnosticOperation>,
  wallClockSeconds: number
): DiagnosticRollups => {
  let accounted = 0
  let execution = 0
  let external = 0
  let lease = 0
  for (const op of operations) {
    accounted += op.duration_seconds
    if (op.kind === "agent.execution") execution += op.duration_seconds
    else if (op.kind === "agent.waiting_external") external += op.duration_seconds
    else if (op.kind === "agent.lease_acquire" && op.outcome === "acquired") lease += op.duration_seconds
  }
  // sums of microsecond values, re-rounded so float noise never shows in the JSON
  const accountedSeconds = seconds(accounted * 1000)
  return {
    wall_clock_seconds: wallClockSeconds,
    accounted_seconds: accountedSeconds,
    unaccounted_seconds: seconds((wallClockSeconds - accountedSeconds) * 1000),
    active_execution_seconds: seconds(execution * 1000),
    external_wait_seconds: seconds(external * 1000),
    lease_wait_seconds: seconds(lease * 1000)
  }
}

/**
 * The trace as `diagnostics.task` shows it: built field by field from the slot, so the trace
 * context and the task id can never slip into it. Wall clock: the seal's for a sealed trace,
 * origin → now for an active one.
 */
export const projectTrace = (slot: TraceSlot, nowMs: number): TaskTrace => {
  const wallClockSeconds = slot.seal?.wall_clock_seconds ?? seconds(nowMs - slot.originMs)
  return {
    runtime_family: slot.runtime,
    completeness: completenessOf(slot),
    operations: slot.operations.slice(),
    seal: slot.seal ?? null,
    rollups: rollupsOf(slot.operations, wallClockSeconds)
  }
}
