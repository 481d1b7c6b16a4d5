import {
  DIAGNOSTIC_LIMITS,
  type InteractionClass,
  type NotRetainedReason,
  type OperationKind,
  type OperationOutcome,
  type RecorderState,
  type RuntimeFamily,
  sealReasonOf,
  type TerminalOutcome
} from "@serverfs/domain"
import { DateTime } from "effect"
import type { TraceLookup } from "./DiagnosticsRecorder.js"
import { RememberedIds } from "./RememberedIds.js"
import { newTraceContext, StagingContext } from "./StagingContext.js"
import { operationOf, projectTrace, seconds, TraceSlot } from "./TraceSlot.js"

export type DiagnosticLimits = { readonly [K in keyof typeof DIAGNOSTIC_LIMITS]: number }

/** How many slot-less task ids keep their reason (evicted, capacity_exhausted…). */
export const REMEMBERED_IDS = 4_096

/**
 * The longest seal JSON there can be (the longest outcome and reason, a 15-digit wall clock, a
 * six-digit year): the reservation must hold it, so the seal always fits (§7.1).
 */
export const MAX_SEAL_BYTES = 160

const byteLength = (value: object): number => Buffer.byteLength(JSON.stringify(value), "utf8")

const isoOf = (millis: number): string => DateTime.formatIso(DateTime.unsafeMake(millis))

/**
 * The bounded diagnostics buffer (spec v0.22 §6–§7): the pure, synchronous core of the
 * recorder. Time comes in as arguments (monotonic ms; wall ms for the seal's timestamp), so the
 * class reads no clock and does no I/O.
 *
 * Budgets: a slot costs (operations + 1) records and (operation bytes + seal) bytes, where the
 * seal is its 512-byte reservation until written (§7.2). Ordinary records stop — for that task
 * only, and for good (prefix truncation, no middle holes) — when the task's 63 records / 32 KiB
 * − 512 would be exceeded, when an operation is over 1 KiB, or when evicting every terminal
 * trace, oldest completion first, cannot make room globally. Active traces are never evicted.
 */
export class DiagnosticsBuffer {
  private readonly slots = new Map<string, TraceSlot>()
  /** Sealed slots in completion order; `terminalHead` is the oldest still retained. */
  private terminal: Array<TraceSlot | undefined> = []
  private terminalHead = 0
  private readonly forgotten = new RememberedIds(REMEMBERED_IDS)
  private records = 0
  private bytes = 0
  private readonly counters = {
    admission_failures: 0,
    ordinary_records_dropped: 0,
    truncated_tasks: 0,
    oversized_rejections: 0,
    evictions: 0
  }
  readonly generationStartedAt: string

  constructor(
    generationStartedAtMillis: number,
    readonly limits: DiagnosticLimits = DIAGNOSTIC_LIMITS
  ) {
    if (limits.maxTaskRecords < 2 || limits.sealReservedBytes < MAX_SEAL_BYTES) {
      throw new Error("diagnostics limits leave no room for an operation and the seal")
    }
    this.generationStartedAt = isoOf(generationStartedAtMillis)
  }

  /** A staging context for a new submission (§9.1 step 2). */
  stage(nowMs: number): StagingContext {
    return new StagingContext(nowMs, this.limits.maxTaskRecords - 1)
  }

  staged(
    staging: StagingContext,
    kind: OperationKind,
    startMs: number,
    nowMs: number,
    outcome?: OperationOutcome
  ): void {
    staging.add({ kind, startMs, endMs: nowMs, outcome })
  }

  /** The task exists: reserve its seal, then attach the staged operations (§7.2). */
  admit(staging: StagingContext, taskId: string, runtime: RuntimeFamily): void {
    if (staging.consumed) return
    staging.consumed = true
    const slot = this.admitSlot(taskId, runtime, false, staging.originMs, staging.trace)
    if (slot === undefined) return
    for (const p of staging.pending) this.record(slot, p.kind, p.startMs, p.endMs, p.outcome, undefined)
    if (staging.overflowed) this.truncate(slot)
    staging.pending.length = 0
  }

  /** A task from before this process shows activity: its trace starts now, `restarted`. */
  admitRestarted(taskId: string, runtime: RuntimeFamily, nowMs: number): void {
    this.admitSlot(taskId, runtime, true, nowMs, newTraceContext())
  }

  begin(taskId: string, kind: OperationKind, nowMs: number, interaction?: InteractionClass): void {
    const slot = this.slots.get(taskId)
    if (slot === undefined || slot.seal !== undefined || slot.open.has(kind)) return
    slot.open.set(kind, { startMs: nowMs, interaction })
  }

  end(taskId: string, kind: OperationKind, nowMs: number, outcome?: OperationOutcome): void {
    const slot = this.slots.get(taskId)
    const open = slot?.open.get(kind)
    if (slot === undefined || open === undefined) return
    slot.open.delete(kind)
    this.record(slot, kind, open.startMs, nowMs, outcome, open.interaction)
  }

  operation(
    taskId: string,
    kind: OperationKind,
    startMs: number,
    nowMs: number,
    outcome?: OperationOutcome
  ): void {
    const slot = this.slots.get(taskId)
    if (slot !== undefined) this.record(slot, kind, startMs, nowMs, outcome, undefined)
  }

  /** Exactly once per admitted task: open segments are closed first, then the reserved seal. */
  seal(taskId: string, outcome: TerminalOutcome, nowMs: number, wallMillis: number): void {
    const slot = this.slots.get(taskId)
    if (slot === undefined || slot.seal !== undefined) return
    if (slot.open.size > 0) {
      const open = [...slot.open].sort(([, a], [, b]) => a.startMs - b.startMs)
      slot.open.clear()
      for (const [kind, o] of open) this.record(slot, kind, o.startMs, nowMs, undefined, o.interaction)
    }
    const seal = {
      outcome,
      reason_code: sealReasonOf(outcome),
      wall_clock_seconds: seconds(nowMs - slot.originMs),
      completed_at: isoOf(wallMillis)
    }
    const size = byteLength(seal)
    slot.seal = seal
    // the reservation becomes the seal itself (MAX_SEAL_BYTES ≤ the reservation: it fits)
    slot.sealBytes = size
    this.bytes += size - this.limits.sealReservedBytes
    this.terminal.push(slot)
  }

  /** The service could not record this task's admission: say so instead of guessing later. */
  markUnavailable(taskId: string): void {
    if (!this.slots.has(taskId) && !this.forgotten.has(taskId)) {
      this.forgotten.remember(taskId, "recording_unavailable")
    }
  }

  lookup(taskId: string, nowMs: number): TraceLookup {
    const slot = this.slots.get(taskId)
    return slot === undefined
      ? { _tag: "Absent", reason: this.forgotten.reasonOf(taskId) }
      : { _tag: "Retained", trace: projectTrace(slot, nowMs) }
  }

  /** Aggregates only (§8.1): no task id, no trace or span id, no per-task list. */
  state(recordFailures: number): RecorderState {
    const terminal = this.terminal.length - this.terminalHead
    return {
      generation_started_at: this.generationStartedAt,
      retained_records: this.records,
      retained_bytes: this.bytes,
      retained_tasks: this.slots.size,
      active_tasks: this.slots.size - terminal,
      terminal_tasks: terminal,
      counters: { record_failures: recordFailures, ...this.counters }
    }
  }

  private admitSlot(
    taskId: string,
    runtime: RuntimeFamily,
    restarted: boolean,
    originMs: number,
    trace: StagingContext["trace"]
  ): TraceSlot | undefined {
    // one slot per task id per process: an id that has, or had, one is left alone (§7.3 rule 7)
    if (this.slots.has(taskId) || this.forgotten.has(taskId)) return undefined
    const { maxRecords, maxBytes, sealReservedBytes } = this.limits
    while (this.records + 1 > maxRecords || this.bytes + sealReservedBytes > maxBytes) {
      if (!this.evictOldest()) return this.refuse(taskId, "capacity_exhausted")
    }
    this.records += 1
    this.bytes += sealReservedBytes
    const slot = new TraceSlot(taskId, runtime, restarted, originMs, trace)
    this.slots.set(taskId, slot)
    return slot
  }

  private refuse(taskId: string, reason: NotRetainedReason): undefined {
    this.counters.admission_failures += 1
    this.forgotten.remember(taskId, reason)
    return undefined
  }

  private record(
    slot: TraceSlot,
    kind: OperationKind,
    startMs: number,
    endMs: number,
    outcome: OperationOutcome | undefined,
    interaction: InteractionClass | undefined
  ): void {
    if (slot.truncated || slot.seal !== undefined) {
      this.counters.ordinary_records_dropped += 1
      return
    }
    const op = operationOf(
      slot.operations.length + 1,
      kind,
      startMs - slot.originMs,
      endMs - startMs,
      outcome,
      interaction
    )
    const size = byteLength(op)
    const { maxRecords, maxBytes, maxTaskRecords, maxTaskBytes, maxOperationBytes, sealReservedBytes } =
      this.limits
    if (size > maxOperationBytes) {
      // rejected whole (§7.3 rule 5); and the trace stops here, or a later record would leave a hole
      this.counters.oversized_rejections += 1
      this.truncate(slot)
      return
    }
    if (
      slot.operations.length + 1 > maxTaskRecords - 1 ||
      slot.ordinaryBytes + size > maxTaskBytes - sealReservedBytes
    ) {
      this.truncate(slot)
      return
    }
    while (this.records + 1 > maxRecords || this.bytes + size > maxBytes) {
      if (!this.evictOldest()) {
        this.truncate(slot)
        return
      }
    }
    slot.operations.push(op)
    slot.ordinaryBytes += size
    this.records += 1
    this.bytes += size
  }

  /** Stop the task's ordinary recording for good; the operation at hand is dropped. */
  private truncate(slot: TraceSlot): void {
    this.counters.ordinary_records_dropped += 1
    if (!slot.truncated) {
      slot.truncated = true
      this.counters.truncated_tasks += 1
    }
  }

  /** Evict the terminal trace completed first (§7.3 rules 1–2); false when there is none. */
  private evictOldest(): boolean {
    const slot = this.terminal[this.terminalHead]
    if (slot === undefined) return false
    this.terminal[this.terminalHead] = undefined
    this.terminalHead += 1
    if (this.terminalHead >= 1024 && this.terminalHead * 2 >= this.terminal.length) {
      // amortised O(1): the queue is compacted once its dead head outweighs the live tail
      this.terminal = this.terminal.slice(this.terminalHead)
      this.terminalHead = 0
    }
    this.slots.delete(slot.taskId)
    this.records -= slot.operations.length + 1
    this.bytes -= slot.ordinaryBytes + slot.sealBytes
    this.forgotten.remember(slot.taskId, "evicted")
    this.counters.evictions += 1
    return true
  }
}
