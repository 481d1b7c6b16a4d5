import { randomBytes } from "node:crypto"
import type { OperationKind, OperationOutcome } from "@serverfs/domain"
import type { DiagnosticStaging } from "./DiagnosticsRecorder.js"

/**
 * The bridge-generated trace context (spec v0.22 §4.1): 16 random bytes as the trace id and 8 as
 * the root span id, from the CSPRNG, so nothing about it can be derived from a task id, a
 * correlation id, an inbound traceparent or any other caller value. It is kept with the trace
 * and never projected: no snapshot, task diagnostic, metric or log carries it.
 */
export interface TraceContext {
  readonly traceId: Uint8Array
  readonly rootSpanId: Uint8Array
}

export const newTraceContext = (): TraceContext => ({ traceId: randomBytes(16), rootSpanId: randomBytes(8) })

/** An operation measured before the task exists (the lease acquisition), in monotonic ms. */
export interface PendingOperation {
  readonly kind: OperationKind
  readonly startMs: number
  readonly endMs: number
  readonly outcome: OperationOutcome | undefined
}

/**
 * A new submission's staging (§9.1): the trace context, the staging instant (the origin of the
 * trace's offsets and of its diagnostic wall clock) and the operations measured before the task
 * is created. Bounded: at most `capacity` pending operations (the task's ordinary record budget);
 * more mark the future trace prefix-truncated. Admitted at most once; discarded by simply
 * dropping it (an idempotent hit, a refused submission).
 */
export class StagingContext implements DiagnosticStaging {
  readonly _tag = "DiagnosticStaging" as const
  readonly trace: TraceContext = newTraceContext()
  readonly pending: Array<PendingOperation> = []
  overflowed = false
  consumed = false

  constructor(
    readonly originMs: number,
    private readonly capacity: number
  ) {}

  add(operation: PendingOperation): void {
    if (this.consumed) return
    if (this.overflowed || this.pending.length >= this.capacity) {
      // no middle holes: once one staged operation is dropped, the later ones are too
      this.overflowed = true
      return
    }
    this.pending.push(operation)
  }
}
