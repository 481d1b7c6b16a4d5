/**
 * The recorder service (spec v0.22 §7.4, §9.3): time from the Clock (a TestClock here, so every
 * duration is exact), and fail-open — a buffer that throws, or whose state is corrupt, advances
 * `record_failures` while every method still succeeds.
 */
import { describe, expect, it } from "@effect/vitest"
import { DiagnosticsSnapshot, DiagnosticsTaskResult, RecorderState, TaskTrace } from "@serverfs/domain"
import {
  DiagnosticsBuffer,
  DiagnosticsRecorder,
  diagnosticsSnapshotOf,
  diagnosticsTaskResultOf
} from "@serverfs/telemetry-local"
import { Effect, Exit, Schema, TestClock } from "effect"

const exact = { onExcessProperty: "error" } as const

/** One call of every method of the service; none may fail or die. */
const everyMethod = Effect.gen(function* () {
  const recorder = yield* DiagnosticsRecorder
  const staging = yield* recorder.stage
  const t0 = yield* recorder.now
  yield* recorder.staged(staging, "agent.lease_acquire", t0, "acquired")
  yield* recorder.admit(staging, "task-1", "codex")
  yield* recorder.admitRestarted("task-0", "claude")
  yield* recorder.begin("task-1", "agent.execution")
  yield* recorder.end("task-1", "agent.execution", "ok")
  yield* recorder.operation("task-1", "agent.finalization", t0)
  yield* recorder.seal("task-1", "succeeded")
  const lookup = yield* recorder.lookup("task-1")
  return { lookup, state: yield* recorder.state }
})

/** A buffer whose every method throws: a bug anywhere inside the recorder. */
class ThrowingBuffer extends DiagnosticsBuffer {
  override stage(): never {
    throw new Error("stage")
  }
  override staged(): never {
    throw new Error("staged")
  }
  override admit(): never {
    throw new Error("admit")
  }
  override admitRestarted(): never {
    throw new Error("admitRestarted")
  }
  override begin(): never {
    throw new Error("begin")
  }
  override end(): never {
    throw new Error("end")
  }
  override operation(): never {
    throw new Error("operation")
  }
  override seal(): never {
    throw new Error("seal")
  }
  override markUnavailable(): never {
    throw new Error("markUnavailable")
  }
  override lookup(): never {
    throw new Error("lookup")
  }
  override state(): never {
    throw new Error("state")
  }
}

describe("DiagnosticsRecorder.layer", () => {
  it.effect("measures with the Clock: staged lease, queue, execution / wait / execution, seal", () =>
    Effect.gen(function* () {
      const recorder = yield* DiagnosticsRecorder
      const staging = yield* recorder.stage
      const leaseStart = yield* recorder.now
      yield* TestClock.adjust("4 millis")
      yield* recorder.staged(staging, "agent.lease_acquire", leaseStart, "acquired")
      yield* recorder.admit(staging, "task-1", "codex")
      const queued = yield* recorder.now
      yield* TestClock.adjust("10 millis")
      yield* recorder.operation("task-1", "agent.queue_wait", queued)
      yield* recorder.begin("task-1", "agent.execution")
      yield* TestClock.adjust("100 millis")
      yield* recorder.end("task-1", "agent.execution")
      yield* recorder.begin("task-1", "agent.waiting_external", "approval")
      yield* TestClock.adjust("30 seconds")
      yield* recorder.end("task-1", "agent.waiting_external", "ok")
      yield* TestClock.adjust("1 millis")
      yield* recorder.begin("task-1", "agent.execution")
      yield* TestClock.adjust("200 millis")
      yield* recorder.seal("task-1", "succeeded") // closes the open execution
      const lookup = yield* recorder.lookup("task-1")
      expect(lookup._tag).toBe("Retained")
      if (lookup._tag !== "Retained") return
      const trace = yield* Schema.decodeUnknown(TaskTrace)(lookup.trace, exact)
      expect(trace.operations.map((o) => [o.kind, o.start_offset_seconds, o.duration_seconds])).toEqual([
        ["agent.lease_acquire", 0, 0.004],
        ["agent.queue_wait", 0.004, 0.01],
        ["agent.execution", 0.014, 0.1],
        ["agent.waiting_external", 0.114, 30],
        ["agent.execution", 30.115, 0.2]
      ])
      expect(trace.seal).toEqual({
        outcome: "succeeded",
        reason_code: "ok",
        wall_clock_seconds: 30.315,
        completed_at: "1970-01-01T00:00:30.315Z"
      })
      expect(trace.rollups).toEqual({
        wall_clock_seconds: 30.315,
        accounted_seconds: 30.314,
        unaccounted_seconds: 0.001,
        active_execution_seconds: 0.3,
        external_wait_seconds: 30,
        lease_wait_seconds: 0.004
      })
    }).pipe(Effect.provide(DiagnosticsRecorder.layer))
  )

  it.effect("every method succeeds and nothing counts as a failure on a healthy buffer", () =>
    Effect.gen(function* () {
      const { state, lookup } = yield* everyMethod
      expect(state.counters.record_failures).toBe(0)
      expect(state.retained_tasks).toBe(2)
      expect(lookup._tag).toBe("Retained")
    }).pipe(Effect.provide(DiagnosticsRecorder.layer))
  )
})

describe("fail-open (§7.4, fault injection)", () => {
  it.effect("a buffer that throws everywhere: every method succeeds, record_failures advances", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(everyMethod)
      expect(Exit.isSuccess(exit)).toBe(true)
      if (!Exit.isSuccess(exit)) return
      // stage, admit (inert staging → markUnavailable), admitRestarted, begin, end, operation,
      // seal, lookup, state: nine faults (staged with an inert staging never reaches the buffer)
      expect(exit.value.state.counters.record_failures).toBe(9)
      expect(exit.value.lookup).toEqual({ _tag: "Absent", reason: "recording_unavailable" })
      yield* Schema.decodeUnknown(RecorderState)(exit.value.state, exact)
      const again = yield* Effect.exit(everyMethod)
      expect(Exit.isSuccess(again) && again.value.state.counters.record_failures).toBe(18)
    }).pipe(Effect.provide(DiagnosticsRecorder.layerWith(new ThrowingBuffer(0))))
  )

  it.effect(
    "a fault during admission: the task is remembered as recording_unavailable, the caller unaffected",
    () => {
      class AdmitFails extends DiagnosticsBuffer {
        override admit(): never {
          throw new Error("admit")
        }
      }
      return Effect.gen(function* () {
        const { state, lookup } = yield* everyMethod
        expect(state.counters.record_failures).toBe(1)
        expect(lookup).toEqual({ _tag: "Absent", reason: "recording_unavailable" })
      }).pipe(Effect.provide(DiagnosticsRecorder.layerWith(new AdmitFails(0))))
    }
  )

  it.effect("a corrupt internal state (unexpected values in the buffer's fields) fails boundedly", () => {
    const buffer = new DiagnosticsBuffer(0)
    return Effect.gen(function* () {
      const recorder = yield* DiagnosticsRecorder
      yield* recorder.admit(yield* recorder.stage, "task-1", "codex")
      Reflect.set(buffer, "slots", { get: () => ({ open: null, operations: 7 }), has: () => "yes" })
      Reflect.set(buffer, "terminal", undefined)
      Reflect.set(buffer, "counters", null)
      const { state, lookup } = yield* everyMethod
      expect(state.counters.record_failures).toBeGreaterThan(0)
      yield* Schema.decodeUnknown(RecorderState)(state, exact)
      expect(lookup._tag).toBe("Absent")
    }).pipe(Effect.provide(DiagnosticsRecorder.layerWith(buffer)))
  })

  it.effect("a staging object the buffer did not make is inert: nothing admitted, nothing thrown", () =>
    Effect.gen(function* () {
      const recorder = yield* DiagnosticsRecorder
      const forged = { _tag: "DiagnosticStaging" as const }
      yield* recorder.staged(forged, "agent.lease_acquire", 0)
      yield* recorder.admit(forged, "task-9", "codex")
      expect(yield* recorder.lookup("task-9")).toEqual({ _tag: "Absent", reason: "recording_unavailable" })
      expect((yield* recorder.state).retained_tasks).toBe(0)
    }).pipe(Effect.provide(DiagnosticsRecorder.layer))
  )
})

describe("snapshot and task JSON (§8)", () => {
  it.effect("the snapshot is catalog v1, aggregates only: no task id, trace or span id", () =>
    Effect.gen(function* () {
      const recorder = yield* DiagnosticsRecorder
      const staging = yield* recorder.stage
      yield* recorder.admit(staging, "task-SENTINEL-7f3a", "claude")
      yield* recorder.begin("task-SENTINEL-7f3a", "agent.execution")
      const snapshot = diagnosticsSnapshotOf(yield* recorder.state, true)
      expect(yield* Schema.decodeUnknown(DiagnosticsSnapshot)(snapshot, exact)).toMatchObject({
        catalog_version: 1,
        retained_tasks: 1,
        active_tasks: 1,
        durable_tasks_predate_generation: true,
        limits: { max_records: 2048, max_bytes: 1048576, seal_reserved_bytes: 512 }
      })
      const text = JSON.stringify(snapshot)
      expect(text).not.toContain("SENTINEL")
      expect(text).not.toMatch(/trace|span/i)
      expect(text).not.toMatch(/[0-9a-f]{16}/)
    }).pipe(Effect.provide(DiagnosticsRecorder.layer))
  )

  it.effect(
    "task results: available, unknown_task, not_retained (recorder reason, bridge_restarted, none)",
    () =>
      Effect.gen(function* () {
        const recorder = yield* DiagnosticsRecorder
        yield* recorder.admit(yield* recorder.stage, "task-1", "codex")
        const known = { _tag: "Known", status: "running", createdBeforeGeneration: false } as const
        const results = [
          diagnosticsTaskResultOf("task-1", known, yield* recorder.lookup("task-1")),
          diagnosticsTaskResultOf("task-x", { _tag: "Unknown" }, yield* recorder.lookup("task-x")),
          diagnosticsTaskResultOf("task-2", known, yield* recorder.lookup("task-2")),
          diagnosticsTaskResultOf(
            "task-3",
            { ...known, createdBeforeGeneration: true },
            yield* recorder.lookup("task-3")
          ),
          diagnosticsTaskResultOf("task-4", known, { _tag: "Absent", reason: "evicted" })
        ]
        for (const r of results) yield* Schema.decodeUnknown(DiagnosticsTaskResult)(r, exact)
        expect(results.map((r) => [r.disposition, "reason" in r ? r.reason : undefined])).toEqual([
          ["available", undefined],
          ["unknown_task", undefined],
          ["not_retained", undefined],
          ["not_retained", "bridge_restarted"],
          ["not_retained", "evicted"]
        ])
        expect(results[0]).toMatchObject({
          catalog_version: 1,
          task_id: "task-1",
          status: "running",
          completeness: "complete"
        })
      }).pipe(Effect.provide(DiagnosticsRecorder.layer))
  )
})
