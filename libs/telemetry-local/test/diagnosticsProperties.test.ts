/**
 * The buffer's invariants (spec v0.22 §6–§7) under random sequences of admissions, operations,
 * segments and seals, with shrunk limits so every ceiling is hit often. Each invariant is
 * restated from the spec and checked through the public surface only (lookups and the state),
 * with the byte totals recounted from the projected JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  DIAGNOSTIC_LIMITS,
  type InteractionClass,
  type OperationKind,
  type OperationOutcome,
  type TaskTrace,
  type TerminalOutcome
} from "@serverfs/domain"
import { type DiagnosticLimits, DiagnosticsBuffer } from "@serverfs/telemetry-local"
import { FastCheck as fc } from "effect"

const LIMITS: DiagnosticLimits = {
  ...DIAGNOSTIC_LIMITS,
  maxRecords: 24,
  maxBytes: 2_600,
  maxTaskRecords: 6,
  maxTaskBytes: 512 + 420,
  maxOperationBytes: 110 // an operation with an interaction or a long outcome is oversized
}
const IDS = ["a", "b", "c", "d", "e", "f", "g", "h"] as const
const KINDS: ReadonlyArray<OperationKind> = [
  "agent.queue_wait",
  "agent.lease_acquire",
  "agent.execution",
  "agent.waiting_external",
  "agent.finalization"
]

type Command =
  | { readonly _tag: "admit"; readonly id: string; readonly staged: number }
  | { readonly _tag: "restarted"; readonly id: string }
  | {
      readonly _tag: "op"
      readonly id: string
      readonly kind: OperationKind
      readonly outcome?: OperationOutcome
    }
  | {
      readonly _tag: "begin"
      readonly id: string
      readonly kind: OperationKind
      readonly interaction?: InteractionClass
    }
  | { readonly _tag: "end"; readonly id: string; readonly kind: OperationKind }
  | { readonly _tag: "seal"; readonly id: string; readonly outcome: TerminalOutcome }

const id = fc.constantFrom(...IDS)
const kind = fc.constantFrom(...KINDS)
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ _tag: fc.constant("admit" as const), id, staged: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ _tag: fc.constant("restarted" as const), id }),
  fc.record(
    {
      _tag: fc.constant("op" as const),
      id,
      kind,
      outcome: fc.constantFrom<OperationOutcome>("acquired", "busy", "recovery_required", "ok")
    },
    { requiredKeys: ["_tag", "id", "kind"] }
  ),
  fc.record(
    {
      _tag: fc.constant("begin" as const),
      id,
      kind,
      interaction: fc.constantFrom<InteractionClass>("approval", "question")
    },
    { requiredKeys: ["_tag", "id", "kind"] }
  ),
  fc.record({ _tag: fc.constant("end" as const), id, kind }),
  fc.record({
    _tag: fc.constant("seal" as const),
    id,
    outcome: fc.constantFrom<TerminalOutcome>("succeeded", "failed", "cancelled", "interrupted")
  })
)

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

describe("buffer invariants under random workloads", () => {
  it("bounds, prefix-only traces, exactly-once seals, active never evicted, oldest completion evicted first", () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 120 }), (commands) => {
        const buffer = new DiagnosticsBuffer(0, LIMITS)
        let now = 0
        const admitted = new Set<string>()
        const sealOrder: Array<string> = []
        const firstSeal = new Map<string, unknown>()
        const truncatedAt = new Map<string, number>()
        for (const c of commands) {
          now += 1
          if (c._tag === "admit") {
            const staging = buffer.stage(now)
            for (let i = 0; i < c.staged; i++)
              buffer.staged(staging, "agent.lease_acquire", now, now + 0.5, "acquired")
            const terminalBefore = buffer.state(0).terminal_tasks
            buffer.admit(staging, c.id, "codex")
            const after = buffer.lookup(c.id, now)
            if (after._tag === "Retained") admitted.add(c.id)
            else if (after.reason === "capacity_exhausted" && !admitted.has(c.id)) {
              // an admission fails only when no finished trace was left to evict
              expect(terminalBefore).toBe(0)
            }
          } else if (c._tag === "restarted") {
            buffer.admitRestarted(c.id, "claude", now)
            if (buffer.lookup(c.id, now)._tag === "Retained") admitted.add(c.id)
          } else if (c._tag === "op") buffer.operation(c.id, c.kind, now - 1, now, c.outcome)
          else if (c._tag === "begin") buffer.begin(c.id, c.kind, now, c.interaction)
          else if (c._tag === "end") buffer.end(c.id, c.kind, now)
          else {
            buffer.seal(c.id, c.outcome, now, now)
            if (admitted.has(c.id) && !sealOrder.includes(c.id)) sealOrder.push(c.id)
          }

          const state = buffer.state(0)
          const retained = new Map<string, TaskTrace>()
          for (const taskId of IDS) {
            const lookup = buffer.lookup(taskId, now)
            if (lookup._tag === "Retained") retained.set(taskId, lookup.trace)
          }
          // global ceilings, and the totals agree with an independent recount of the JSON
          expect(state.retained_records).toBeLessThanOrEqual(LIMITS.maxRecords)
          expect(state.retained_bytes).toBeLessThanOrEqual(LIMITS.maxBytes)
          let records = 0
          let bytes = 0
          for (const [taskId, trace] of retained) {
            const ordinary = trace.operations.reduce((sum, op) => sum + bytesOf(op), 0)
            const seal = trace.seal === null ? LIMITS.sealReservedBytes : bytesOf(trace.seal)
            records += trace.operations.length + 1
            bytes += ordinary + seal
            // per-task ceilings, the seal included; no operation over the operation limit
            expect(trace.operations.length + 1).toBeLessThanOrEqual(LIMITS.maxTaskRecords)
            expect(ordinary + LIMITS.sealReservedBytes).toBeLessThanOrEqual(LIMITS.maxTaskBytes)
            for (const op of trace.operations)
              expect(bytesOf(op)).toBeLessThanOrEqual(LIMITS.maxOperationBytes)
            // a contiguous prefix: sequences 1..n, and once truncated it never grows again
            expect(trace.operations.map((o) => o.sequence)).toEqual(trace.operations.map((_, i) => i + 1))
            const truncated = trace.completeness.endsWith("truncated_prefix")
            const stoppedAt = truncatedAt.get(taskId)
            if (stoppedAt !== undefined) expect(trace.operations.length).toBe(stoppedAt)
            else if (truncated) truncatedAt.set(taskId, trace.operations.length)
            // exactly one seal: once written it never changes
            if (trace.seal !== null) {
              const first = firstSeal.get(taskId)
              if (first === undefined) firstSeal.set(taskId, trace.seal)
              else expect(trace.seal).toEqual(first)
            }
            expect(trace.seal !== null).toBe(sealOrder.includes(taskId))
          }
          expect(state.retained_records).toBe(records)
          expect(state.retained_bytes).toBe(bytes)
          expect(state.retained_tasks).toBe(retained.size)
          expect(state.terminal_tasks).toBe([...retained.values()].filter((t) => t.seal !== null).length)
          // active traces are never evicted
          for (const taskId of admitted) {
            if (!sealOrder.includes(taskId)) expect(retained.has(taskId)).toBe(true)
          }
          // eviction takes the oldest completion first: the retained sealed ids are a suffix of the seal order
          const kept = sealOrder.filter((taskId) => retained.has(taskId))
          expect(kept).toEqual(sealOrder.slice(sealOrder.length - kept.length))
          for (const taskId of sealOrder.slice(0, sealOrder.length - kept.length)) {
            expect(buffer.lookup(taskId, now)).toEqual({ _tag: "Absent", reason: "evicted" })
          }
        }
      }),
      { numRuns: 300 }
    )
  })
})
