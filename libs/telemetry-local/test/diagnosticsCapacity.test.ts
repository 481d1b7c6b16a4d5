/**
 * The buffer's frozen bounds (spec v0.22 §7): the exact record and byte ceilings, the seal
 * reservation, whole-terminal-trace eviction oldest completion first, active traces never
 * evicted, admission failure leaving no slot, oversized operations rejected whole, and prefix
 * truncation (no middle holes). Byte rows shrink the limits (production never does): with catalog
 * v1's closed fields an operation is ~100 bytes, so 2,048 records can never reach 1 MiB.
 */
import { describe, expect, it } from "@effect/vitest"
import { DIAGNOSTIC_LIMITS, type TaskTrace } from "@serverfs/domain"
import { type DiagnosticLimits, DiagnosticsBuffer } from "@serverfs/telemetry-local"

const WALL = Date.UTC(2026, 11, 1)

const admitted = (buffer: DiagnosticsBuffer, taskId: string, at = 0) =>
  buffer.admit(buffer.stage(at), taskId, "codex")

/** n zero-length executions at the trace origin: the k-th is `opJson(k)` exactly. */
const fill = (buffer: DiagnosticsBuffer, taskId: string, n: number) => {
  for (let i = 0; i < n; i++) buffer.operation(taskId, "agent.execution", 0, 0)
}
/** The compact JSON of such an operation, written out independently of the code. */
const opBytes = (sequence: number) =>
  `{"sequence":${sequence},"kind":"agent.execution","start_offset_seconds":0,"duration_seconds":0}`.length

const traceOf = (buffer: DiagnosticsBuffer, taskId: string): TaskTrace => {
  const lookup = buffer.lookup(taskId, 0)
  if (lookup._tag !== "Retained") throw new Error(`${taskId} not retained`)
  return lookup.trace
}

const limits = (overrides: Partial<DiagnosticLimits>): DiagnosticLimits => ({
  ...DIAGNOSTIC_LIMITS,
  ...overrides
})

describe("frozen limits (§7.1)", () => {
  it("are the spec's constants", () => {
    expect(new DiagnosticsBuffer(WALL).limits).toEqual({
      maxRecords: 2048,
      maxBytes: 1_048_576,
      maxTaskRecords: 64,
      maxTaskBytes: 32_768,
      maxOperationBytes: 1024,
      sealReservedBytes: 512
    })
  })
})

describe("global record ceiling: 2,048", () => {
  it("32 active tasks × (63 operations + the seal slot) fill it exactly, with nothing dropped", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    for (let t = 0; t < 32; t++) {
      admitted(buffer, `t${t}`)
      fill(buffer, `t${t}`, 63)
    }
    expect(buffer.state(0)).toMatchObject({
      retained_records: 2048,
      retained_tasks: 32,
      active_tasks: 32,
      counters: { ordinary_records_dropped: 0, truncated_tasks: 0, admission_failures: 0 }
    })
    // full of active traces only: a 33rd admission is refused and leaves no slot (§7.2)
    admitted(buffer, "late")
    expect(buffer.lookup("late", 0)).toEqual({ _tag: "Absent", reason: "capacity_exhausted" })
    expect(buffer.state(0)).toMatchObject({
      retained_records: 2048,
      retained_tasks: 32,
      counters: { admission_failures: 1, evictions: 0 }
    })
    // and the refused id stays refused (one slot per id per process)
    buffer.admitRestarted("late", "codex", 0)
    expect(buffer.lookup("late", 0)._tag).toBe("Absent")
  })

  it("with 33 tasks the global ceiling truncates the task that hits it, and only that one; its seal still fits", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    for (let t = 0; t < 33; t++) admitted(buffer, `t${t}`)
    for (let t = 0; t < 31; t++) fill(buffer, `t${t}`, 63) // 33 reservations + 1,953 = 1,986
    fill(buffer, "t31", 62) // 2,048
    expect(buffer.state(0).retained_records).toBe(2048)
    fill(buffer, "t32", 1)
    fill(buffer, "t31", 1)
    expect(traceOf(buffer, "t32")).toMatchObject({ completeness: "truncated_prefix", operations: [] })
    expect(traceOf(buffer, "t31").completeness).toBe("truncated_prefix")
    expect(traceOf(buffer, "t31").operations).toHaveLength(62)
    expect(traceOf(buffer, "t0").completeness).toBe("complete")
    buffer.seal("t32", "succeeded", 5, WALL)
    buffer.seal("t31", "failed", 5, WALL)
    expect(traceOf(buffer, "t32").seal?.outcome).toBe("succeeded")
    expect(traceOf(buffer, "t31").seal?.outcome).toBe("failed")
    expect(buffer.state(0)).toMatchObject({
      retained_records: 2048,
      terminal_tasks: 2,
      counters: { truncated_tasks: 2, ordinary_records_dropped: 2 }
    })
  })

  it("a truncated active trace stays truncated even after room appears", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    for (let t = 0; t < 32; t++) {
      admitted(buffer, `t${t}`)
      fill(buffer, `t${t}`, t === 31 ? 62 : 63)
    }
    admitted(buffer, "x") // 2,048: x has only its reservation
    fill(buffer, "x", 1)
    expect(traceOf(buffer, "x").completeness).toBe("truncated_prefix")
    buffer.seal("t0", "succeeded", 1, WALL)
    buffer.operation("x", "agent.execution", 0, 0)
    expect(traceOf(buffer, "x").operations).toHaveLength(0)
    expect(buffer.state(0).counters.evictions).toBe(0)
  })
})

describe("per-task ceilings: 64 records / 32 KiB with the seal reserved", () => {
  it("63 ordinary records are kept, the 64th is dropped and the trace is prefix-truncated", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    admitted(buffer, "t")
    fill(buffer, "t", 63)
    expect(traceOf(buffer, "t").completeness).toBe("complete")
    fill(buffer, "t", 1)
    const trace = traceOf(buffer, "t")
    expect(trace.completeness).toBe("truncated_prefix")
    expect(trace.operations.map((o) => o.sequence)).toEqual(Array.from({ length: 63 }, (_, i) => i + 1))
  })

  it("task bytes: ordinary records stop at 32 KiB − 512 (shrunk to three operations' worth)", () => {
    const taskBytes = 512 + opBytes(1) + opBytes(2) + opBytes(3)
    const buffer = new DiagnosticsBuffer(WALL, limits({ maxTaskBytes: taskBytes }))
    admitted(buffer, "t")
    fill(buffer, "t", 3)
    expect(traceOf(buffer, "t").completeness).toBe("complete")
    expect(buffer.state(0).retained_bytes).toBe(taskBytes)
    fill(buffer, "t", 1)
    expect(traceOf(buffer, "t")).toMatchObject({ completeness: "truncated_prefix" })
    expect(traceOf(buffer, "t").operations).toHaveLength(3)
    buffer.seal("t", "succeeded", 0, WALL)
    expect(traceOf(buffer, "t").seal).not.toBeNull()
  })
})

describe("operation size: 1,024 bytes at most, rejected whole", () => {
  it("an operation of exactly the limit is kept; one byte over is rejected, counted, and stops the trace", () => {
    const atLimit = new DiagnosticsBuffer(WALL, limits({ maxOperationBytes: opBytes(1) }))
    admitted(atLimit, "t")
    fill(atLimit, "t", 1)
    expect(traceOf(atLimit, "t").operations).toHaveLength(1)

    const over = new DiagnosticsBuffer(WALL, limits({ maxOperationBytes: opBytes(1) - 1 }))
    admitted(over, "t")
    fill(over, "t", 1)
    expect(traceOf(over, "t")).toMatchObject({ completeness: "truncated_prefix", operations: [] })
    expect(over.state(0)).toMatchObject({
      retained_records: 1,
      retained_bytes: 512,
      counters: { oversized_rejections: 1, ordinary_records_dropped: 1, truncated_tasks: 1 }
    })
  })
})

describe("global byte ceiling: 1 MiB (shrunk)", () => {
  it("bytes bind before records: the seal reservations and operations fill it exactly", () => {
    // two tasks: 2 × 512 reserved + 4 operations on a, 1 on b, exactly
    const maxBytes = 2 * 512 + opBytes(1) + opBytes(2) + opBytes(3) + opBytes(4) + opBytes(1)
    const buffer = new DiagnosticsBuffer(WALL, limits({ maxBytes }))
    admitted(buffer, "a")
    admitted(buffer, "b")
    fill(buffer, "a", 4)
    fill(buffer, "b", 1)
    expect(buffer.state(0)).toMatchObject({ retained_bytes: maxBytes, retained_records: 7 })
    fill(buffer, "b", 1)
    expect(traceOf(buffer, "b").completeness).toBe("truncated_prefix")
    // a third task cannot reserve its 512 bytes: no slot at all
    admitted(buffer, "c")
    expect(buffer.lookup("c", 0)).toEqual({ _tag: "Absent", reason: "capacity_exhausted" })
    // the seal never needs room: it replaces its reservation
    buffer.seal("a", "succeeded", 0, WALL)
    expect(buffer.state(0).retained_bytes).toBeLessThan(maxBytes)
    expect(traceOf(buffer, "a").seal).not.toBeNull()
  })
})

describe("eviction (§7.3)", () => {
  it("evicts whole terminal traces, oldest COMPLETION first (not oldest admission), and only as many as needed", () => {
    const buffer = new DiagnosticsBuffer(WALL, limits({ maxRecords: 12 }))
    for (const id of ["a", "b", "c"]) {
      admitted(buffer, id)
      fill(buffer, id, 3)
    }
    // 12 records: a, b, c each 3 + reservation
    buffer.seal("b", "succeeded", 1, WALL + 1)
    buffer.seal("a", "succeeded", 2, WALL + 2)
    admitted(buffer, "d") // needs 1 record: evicts b (completed first) whole
    expect(buffer.lookup("b", 0)).toEqual({ _tag: "Absent", reason: "evicted" })
    expect(traceOf(buffer, "a").operations).toHaveLength(3)
    fill(buffer, "d", 3) // 3 more: still room (b freed 4)
    expect(buffer.lookup("a", 0)._tag).toBe("Retained")
    fill(buffer, "d", 1) // evicts a
    expect(buffer.lookup("a", 0)).toEqual({ _tag: "Absent", reason: "evicted" })
    expect(traceOf(buffer, "d").operations).toHaveLength(4)
    expect(buffer.state(0)).toMatchObject({
      retained_records: 9,
      retained_tasks: 2,
      active_tasks: 2,
      terminal_tasks: 0,
      counters: { evictions: 2, ordinary_records_dropped: 0 }
    })
    // active c was never touched, and once no terminal trace is left recording truncates instead
    expect(traceOf(buffer, "c").operations).toHaveLength(3)
    fill(buffer, "d", 4)
    expect(traceOf(buffer, "d").completeness).toBe("truncated_prefix")
    expect(traceOf(buffer, "c").completeness).toBe("complete")
  })

  it("a saturated buffer of terminal traces keeps admitting: each new task evicts the oldest", () => {
    const buffer = new DiagnosticsBuffer(WALL)
    for (let t = 0; t < 3000; t++) {
      admitted(buffer, `t${t}`)
      fill(buffer, `t${t}`, 3)
      buffer.seal(`t${t}`, "succeeded", t, WALL + t)
    }
    const state = buffer.state(0)
    expect(state.retained_records).toBeLessThanOrEqual(2048)
    expect(state.retained_tasks).toBe(512) // 2,048 / 4
    expect(state.counters.evictions).toBe(3000 - 512)
    expect(state.counters.admission_failures).toBe(0)
    expect(buffer.lookup("t2487", 0)).toEqual({ _tag: "Absent", reason: "evicted" })
    expect(buffer.lookup("t2488", 0)._tag).toBe("Retained")
  })

  it("forgets evicted ids beyond the last 4,096: an unknown reason, never a guess", () => {
    const buffer = new DiagnosticsBuffer(WALL, limits({ maxRecords: 1 }))
    for (let t = 0; t < 4098; t++) {
      admitted(buffer, `t${t}`)
      buffer.seal(`t${t}`, "succeeded", t, WALL)
    }
    expect(buffer.lookup("t0", 0)).toEqual({ _tag: "Absent", reason: undefined })
    expect(buffer.lookup("t1", 0)).toEqual({ _tag: "Absent", reason: "evicted" })
    expect(buffer.lookup("t4097", 0)._tag).toBe("Retained")
  })
})
