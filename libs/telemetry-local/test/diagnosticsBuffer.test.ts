/**
 * The diagnostics buffer's trace semantics (spec v0.22 §4.1, §5, §6): the catalog v1 shape of
 * every projection, multi-segment rollups, unclamped unaccounted time, the seal written exactly
 * once, idempotent admission, restarted traces and the trace context's privacy. Time is given
 * in monotonic milliseconds, so every figure is exact.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  DiagnosticOperation,
  DiagnosticSeal,
  type OperationKind,
  type OperationOutcome,
  RecorderState,
  TaskTrace,
  type TerminalOutcome
} from "@serverfs/domain"
import { DiagnosticsBuffer, type TraceLookup } from "@serverfs/telemetry-local"
import { Schema } from "effect"
import { StagingContext } from "../src/diagnostics/StagingContext.js"
import { rollupsOf } from "../src/diagnostics/TraceSlot.js"

const exact = { onExcessProperty: "error" } as const
const WALL = Date.UTC(2026, 11, 1, 12, 0, 0)

const traceOf = (lookup: TraceLookup): TaskTrace => {
  if (lookup._tag !== "Retained") throw new Error(`no trace: ${JSON.stringify(lookup)}`)
  // the projection is catalog v1 exactly: no key the schema does not name
  return Schema.decodeUnknownSync(TaskTrace)(lookup.trace, exact)
}

/** A buffer with one admitted task `t` staged at 0 ms. */
const withTask = (taskId = "t") => {
  const buffer = new DiagnosticsBuffer(WALL)
  const staging = buffer.stage(0)
  buffer.admit(staging, taskId, "codex")
  return buffer
}

describe("catalog v1", () => {
  it("every kind, outcome and interaction projects to a closed-schema operation; no extra keys", () => {
    const kinds: ReadonlyArray<OperationKind> = [
      "agent.queue_wait",
      "agent.lease_acquire",
      "agent.runtime_start",
      "agent.execution",
      "agent.waiting_external",
      "agent.finalization",
      "agent.recovery"
    ]
    const outcomes: ReadonlyArray<OperationOutcome> = [
      "acquired",
      "busy",
      "recovery_required",
      "failure",
      "interrupted",
      "timed_out",
      "guard_cleared",
      "guard_kept",
      "reconcile_failed",
      "ok",
      "error",
      "cancelled",
      "expired",
      "stale"
    ]
    const buffer = withTask()
    for (const [i, kind] of kinds.entries()) buffer.operation("t", kind, i, i + 1)
    for (const [i, outcome] of outcomes.entries())
      buffer.operation("t", "agent.execution", 7 + i, 8 + i, outcome)
    buffer.begin("t", "agent.waiting_external", 21, "approval")
    buffer.end("t", "agent.waiting_external", 22, "ok")
    buffer.begin("t", "agent.waiting_external", 22, "question")
    buffer.end("t", "agent.waiting_external", 23)
    const trace = traceOf(buffer.lookup("t", 23))
    expect(trace.operations).toHaveLength(kinds.length + outcomes.length + 2)
    for (const op of trace.operations) Schema.decodeUnknownSync(DiagnosticOperation)(op, exact)
    expect(trace.operations.map((o) => o.sequence)).toEqual(trace.operations.map((_, i) => i + 1))
    expect(trace.operations.at(-2)).toEqual({
      sequence: kinds.length + outcomes.length + 1,
      kind: "agent.waiting_external",
      start_offset_seconds: 0.021,
      duration_seconds: 0.001,
      outcome: "ok",
      interaction: "approval"
    })
    expect(Object.keys(trace).sort()).toEqual([
      "completeness",
      "operations",
      "rollups",
      "runtime_family",
      "seal"
    ])
  })

  it("the seal maps each terminal outcome to its coarse reason (§5.2), and decodes exactly", () => {
    const expected: ReadonlyArray<readonly [TerminalOutcome, string]> = [
      ["succeeded", "ok"],
      ["cancelled", "safe"],
      ["failed", "degraded"],
      ["interrupted", "unavailable"]
    ]
    for (const [outcome, reason] of expected) {
      const buffer = withTask()
      buffer.seal("t", outcome, 2500, WALL + 2500)
      const seal = traceOf(buffer.lookup("t", 9999)).seal
      expect(Schema.decodeUnknownSync(DiagnosticSeal)(seal, exact)).toEqual({
        outcome,
        reason_code: reason,
        wall_clock_seconds: 2.5,
        completed_at: "2026-12-01T12:00:02.500Z"
      })
    }
  })

  it("the state is aggregates only and decodes exactly", () => {
    const buffer = withTask()
    const state = Schema.decodeUnknownSync(RecorderState)(buffer.state(0), exact)
    expect(state).toEqual({
      generation_started_at: "2026-12-01T12:00:00.000Z",
      retained_records: 1,
      retained_bytes: 512,
      retained_tasks: 1,
      active_tasks: 1,
      terminal_tasks: 0,
      counters: {
        record_failures: 0,
        admission_failures: 0,
        ordinary_records_dropped: 0,
        truncated_tasks: 0,
        oversized_rejections: 0,
        evictions: 0
      }
    })
  })
})

describe("multi-segment execution and external waits (§5.1, §5.3)", () => {
  it("execution → approval → execution → question → execution: every segment kept, rollups sum them", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    const staging = buffer.stage(0)
    buffer.staged(staging, "agent.lease_acquire", 0, 5, "acquired")
    buffer.admit(staging, "t", "claude")
    buffer.operation("t", "agent.queue_wait", 5, 10)
    buffer.operation("t", "agent.runtime_start", 10, 12, "ok")
    buffer.begin("t", "agent.execution", 12)
    buffer.end("t", "agent.execution", 20)
    buffer.begin("t", "agent.waiting_external", 20, "approval")
    buffer.end("t", "agent.waiting_external", 50, "ok")
    buffer.begin("t", "agent.execution", 51) // 50 → 51: resolve-to-resume gap, honestly unaccounted
    buffer.end("t", "agent.execution", 60)
    buffer.begin("t", "agent.waiting_external", 60, "question")
    buffer.end("t", "agent.waiting_external", 70, "ok")
    buffer.begin("t", "agent.execution", 70)
    buffer.end("t", "agent.execution", 80)
    buffer.operation("t", "agent.finalization", 80, 82)
    buffer.seal("t", "succeeded", 83, WALL + 83)
    const trace = traceOf(buffer.lookup("t", 1000))
    expect(trace.operations.map((o) => [o.kind, o.duration_seconds])).toEqual([
      ["agent.lease_acquire", 0.005],
      ["agent.queue_wait", 0.005],
      ["agent.runtime_start", 0.002],
      ["agent.execution", 0.008],
      ["agent.waiting_external", 0.03],
      ["agent.execution", 0.009],
      ["agent.waiting_external", 0.01],
      ["agent.execution", 0.01],
      ["agent.finalization", 0.002]
    ])
    expect(
      trace.operations.filter((o) => o.kind === "agent.waiting_external").map((o) => o.interaction)
    ).toEqual(["approval", "question"])
    expect(trace.rollups).toEqual({
      wall_clock_seconds: 0.083,
      accounted_seconds: 0.081,
      unaccounted_seconds: 0.002,
      active_execution_seconds: 0.027,
      external_wait_seconds: 0.04,
      lease_wait_seconds: 0.005
    })
    expect(trace.completeness).toBe("complete")
  })

  it("a busy acquisition is accounted (the call took time) but is not lease wait", () => {
    const op = (outcome: OperationOutcome, duration: number) => ({
      sequence: 1,
      kind: "agent.lease_acquire" as const,
      start_offset_seconds: 0,
      duration_seconds: duration,
      outcome
    })
    expect(
      rollupsOf([op("busy", 0.004), op("acquired", 0.001), op("recovery_required", 0.002)], 0.01)
    ).toEqual({
      wall_clock_seconds: 0.01,
      accounted_seconds: 0.007,
      unaccounted_seconds: 0.003,
      active_execution_seconds: 0,
      external_wait_seconds: 0,
      lease_wait_seconds: 0.001
    })
  })

  it("one open segment per kind: a second begin keeps the first; an end with none open records nothing", () => {
    const buffer = withTask()
    buffer.end("t", "agent.execution", 1)
    buffer.begin("t", "agent.execution", 2)
    buffer.begin("t", "agent.execution", 4)
    buffer.end("t", "agent.execution", 10)
    buffer.end("t", "agent.execution", 12)
    const trace = traceOf(buffer.lookup("t", 20))
    expect(trace.operations.map((o) => [o.start_offset_seconds, o.duration_seconds])).toEqual([
      [0.002, 0.008]
    ])
  })
})

describe("wall clock and accounting (§5.3)", () => {
  it("overlapping leaves give a NEGATIVE unaccounted, preserved, not clamped", () => {
    const buffer = withTask()
    buffer.begin("t", "agent.execution", 0)
    buffer.operation("t", "agent.finalization", 0, 10) // measured inside the open execution
    buffer.end("t", "agent.execution", 10)
    buffer.seal("t", "failed", 10, WALL + 10)
    const { rollups } = traceOf(buffer.lookup("t", 500))
    expect(rollups.wall_clock_seconds).toBe(0.01)
    expect(rollups.accounted_seconds).toBe(0.02)
    expect(rollups.unaccounted_seconds).toBe(-0.01)
  })

  it("an active trace's wall clock runs from staging to now; a sealed one's is the seal's", () => {
    const buffer = withTask()
    buffer.operation("t", "agent.queue_wait", 0, 3)
    expect(traceOf(buffer.lookup("t", 7)).rollups.wall_clock_seconds).toBe(0.007)
    expect(traceOf(buffer.lookup("t", 7)).rollups.unaccounted_seconds).toBe(0.004)
    expect(traceOf(buffer.lookup("t", 7)).seal).toBeNull()
    buffer.seal("t", "succeeded", 9, WALL)
    expect(traceOf(buffer.lookup("t", 90_000)).rollups.wall_clock_seconds).toBe(0.009)
  })
})

describe("terminal seal (§6)", () => {
  it("is written exactly once: a second seal (any outcome) changes nothing", () => {
    const buffer = withTask()
    buffer.seal("t", "cancelled", 4, WALL + 4)
    const before = buffer.state(0)
    buffer.seal("t", "succeeded", 8, WALL + 8)
    expect(traceOf(buffer.lookup("t", 9)).seal).toMatchObject({
      outcome: "cancelled",
      wall_clock_seconds: 0.004
    })
    expect(buffer.state(0)).toEqual(before)
  })

  it("closes open segments first, then seals; nothing is recorded after it", () => {
    const buffer = withTask()
    buffer.begin("t", "agent.execution", 2)
    buffer.begin("t", "agent.waiting_external", 5, "question")
    buffer.seal("t", "cancelled", 9, WALL)
    buffer.operation("t", "agent.finalization", 9, 10)
    buffer.begin("t", "agent.execution", 11)
    const trace = traceOf(buffer.lookup("t", 12))
    expect(trace.operations).toEqual([
      { sequence: 1, kind: "agent.execution", start_offset_seconds: 0.002, duration_seconds: 0.007 },
      {
        sequence: 2,
        kind: "agent.waiting_external",
        start_offset_seconds: 0.005,
        duration_seconds: 0.004,
        interaction: "question"
      }
    ])
    expect(trace.seal?.outcome).toBe("cancelled")
    expect(buffer.state(0).counters.ordinary_records_dropped).toBe(1)
  })

  it("is still written after prefix truncation (63 ordinary records + the seal = 64)", () => {
    const buffer = withTask()
    for (let i = 0; i < 70; i++) buffer.operation("t", "agent.execution", i, i + 1)
    buffer.seal("t", "failed", 100, WALL)
    const trace = traceOf(buffer.lookup("t", 100))
    expect(trace.operations).toHaveLength(63)
    expect(trace.operations.at(-1)?.sequence).toBe(63)
    expect(trace.completeness).toBe("truncated_prefix")
    expect(trace.seal).toMatchObject({ outcome: "failed", reason_code: "degraded" })
    expect(buffer.state(0)).toMatchObject({
      retained_records: 64,
      counters: { ordinary_records_dropped: 7, truncated_tasks: 1 }
    })
  })

  it("the longest possible seal fits its reservation", () => {
    const longest = {
      outcome: "interrupted",
      reason_code: "unavailable",
      wall_clock_seconds: -Number.MAX_VALUE,
      completed_at: "+275760-09-13T00:00:00.000Z"
    }
    expect(Buffer.byteLength(JSON.stringify(longest))).toBeLessThanOrEqual(160)
  })

  it("a seal for a task without a slot does nothing", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    buffer.seal("never-admitted", "succeeded", 1, WALL)
    expect(buffer.lookup("never-admitted", 1)).toEqual({ _tag: "Absent", reason: undefined })
    expect(buffer.state(0).retained_records).toBe(0)
  })
})

describe("one slot per task id per process (§4.2, §7.3 rule 7)", () => {
  it("an idempotent re-submit's staging is not attached: no append, no reopen, no second slot", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    const first = buffer.stage(0)
    buffer.staged(first, "agent.lease_acquire", 0, 1, "acquired")
    buffer.admit(first, "t", "codex")
    buffer.seal("t", "succeeded", 5, WALL)
    const before = { state: buffer.state(0), trace: buffer.lookup("t", 6) }
    const retry = buffer.stage(10)
    buffer.staged(retry, "agent.lease_acquire", 10, 11, "acquired")
    buffer.admit(retry, "t", "codex")
    buffer.admitRestarted("t", "codex", 12)
    expect(buffer.state(0)).toEqual(before.state)
    expect(buffer.lookup("t", 6)).toEqual(before.trace)
  })

  it("one staging admits one task at most", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    const staging = buffer.stage(0)
    buffer.admit(staging, "a", "codex")
    buffer.admit(staging, "b", "codex")
    expect(buffer.lookup("b", 1)._tag).toBe("Absent")
    expect(buffer.state(0).retained_tasks).toBe(1)
  })
})

describe("restarted traces (§6.1)", () => {
  it("a pre-restart task's later activity is `restarted`, then `restarted_truncated_prefix`; its seal still lands", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    buffer.admitRestarted("old", "claude", 1000)
    buffer.operation("old", "agent.recovery", 1000, 1004, "interrupted")
    const restarted = traceOf(buffer.lookup("old", 1010))
    expect(restarted.completeness).toBe("restarted")
    expect(restarted.operations[0]).toEqual({
      sequence: 1,
      kind: "agent.recovery",
      start_offset_seconds: 0,
      duration_seconds: 0.004,
      outcome: "interrupted"
    })
    expect(restarted.rollups.wall_clock_seconds).toBe(0.01)
    for (let i = 0; i < 63; i++) buffer.operation("old", "agent.execution", 1010, 1011)
    buffer.seal("old", "interrupted", 1020, WALL)
    const truncated = traceOf(buffer.lookup("old", 1030))
    expect(truncated.completeness).toBe("restarted_truncated_prefix")
    expect(truncated.seal).toMatchObject({
      outcome: "interrupted",
      reason_code: "unavailable",
      wall_clock_seconds: 0.02
    })
  })
})

describe("trace context (§4.1)", () => {
  it("is 16 + 8 random bytes per staging, and appears in no projection", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    const stagings = Array.from({ length: 32 }, (_, i) => buffer.stage(i))
    const hex = (b: Uint8Array) => Buffer.from(b).toString("hex")
    for (const s of stagings) {
      expect(s).toBeInstanceOf(StagingContext)
      expect(s.trace.traceId).toHaveLength(16)
      expect(s.trace.rootSpanId).toHaveLength(8)
    }
    expect(new Set(stagings.map((s) => hex(s.trace.traceId))).size).toBe(32)
    stagings.forEach((s, i) => {
      buffer.staged(s, "agent.lease_acquire", i, i + 1, "acquired")
      buffer.admit(s, `task-${i}`, "codex")
    })
    const rendered = JSON.stringify([
      buffer.state(0),
      ...stagings.map((_, i) => buffer.lookup(`task-${i}`, 100))
    ])
    for (const s of stagings) {
      for (const form of [
        hex(s.trace.traceId),
        hex(s.trace.rootSpanId),
        Buffer.from(s.trace.traceId).toString("base64")
      ]) {
        expect(rendered).not.toContain(form)
      }
    }
    expect(rendered).not.toContain("task-")
  })
})
