import type {
  InteractionClass,
  NotRetainedReason,
  OperationKind,
  OperationOutcome,
  RecorderState,
  RuntimeFamily,
  TaskTrace,
  TerminalOutcome
} from "@serverfs/domain"
import { Clock, Context, Effect, Layer } from "effect"
import { DiagnosticsBuffer } from "./DiagnosticsBuffer.js"
import { makeFailOpenRecorder } from "./FailOpenRecorder.js"

/**
 * A new submission's diagnostic staging (spec v0.22 §4.1, §9.1): it holds the bridge-generated
 * trace context (random, never derived from any public id, never shown) and the operations
 * measured before the task exists (the lease acquisition). Opaque to callers.
 */
export interface DiagnosticStaging {
  readonly _tag: "DiagnosticStaging"
}

/** What the recorder knows of one task id. */
export type TraceLookup =
  | { readonly _tag: "Retained"; readonly trace: TaskTrace }
  | { readonly _tag: "Absent"; readonly reason: NotRetainedReason | undefined }

/**
 * The bounded diagnostics recorder (spec v0.22): process-local, memory-only, fail-open. Every
 * recording method succeeds whatever happens inside — a fault or an exhausted budget advances a
 * counter, never the caller's outcome — runs synchronously (no I/O, no fiber, no timer) and
 * reads time from the Clock (monotonic nanoseconds).
 */
export interface DiagnosticsRecorderService {
  /** A new staging context, after the idempotency check missed (§9.1 step 2). */
  readonly stage: Effect.Effect<DiagnosticStaging>
  /** Record an operation measured in staging from `startedAt` (monotonic ms, see `now`) to now. */
  readonly staged: (
    staging: DiagnosticStaging,
    kind: OperationKind,
    startedAt: number,
    outcome?: OperationOutcome
  ) => Effect.Effect<void>
  /**
   * The task now exists: admit its slot (reserving its seal) and attach the staged operations.
   * No room even after evicting finished traces: nothing is admitted (admission failure).
   */
  readonly admit: (staging: DiagnosticStaging, taskId: string, runtime: RuntimeFamily) => Effect.Effect<void>
  /**
   * A durable task from before this process shows activity now (restart recovery): admit a
   * slot whose completeness is `restarted*`. No-op when the task already has a slot.
   */
  readonly admitRestarted: (taskId: string, runtime: RuntimeFamily) => Effect.Effect<void>
  /** Open a segment of `kind` now (at most one open segment per kind and task). */
  readonly begin: (taskId: string, kind: OperationKind, interaction?: InteractionClass) => Effect.Effect<void>
  /** Close the open segment of `kind` now and record it; no-op when none is open. */
  readonly end: (taskId: string, kind: OperationKind, outcome?: OperationOutcome) => Effect.Effect<void>
  /** Record an operation measured by the caller from `startedAt` (monotonic ms) to now. */
  readonly operation: (
    taskId: string,
    kind: OperationKind,
    startedAt: number,
    outcome?: OperationOutcome
  ) => Effect.Effect<void>
  /** The terminal seal: closes open segments (recorded as far as room allows), then seals once. */
  readonly seal: (taskId: string, outcome: TerminalOutcome) => Effect.Effect<void>
  /** Monotonic milliseconds from the Clock, the time base of `staged` and `operation`. */
  readonly now: Effect.Effect<number>
  readonly state: Effect.Effect<RecorderState>
  readonly lookup: (taskId: string) => Effect.Effect<TraceLookup>
}

export class DiagnosticsRecorder extends Context.Tag("@serverfs/telemetry-local/DiagnosticsRecorder")<
  DiagnosticsRecorder,
  DiagnosticsRecorderService
>() {
  /** The recorder over a buffer at the frozen limits; its generation starts when the layer is built. */
  static readonly layer: Layer.Layer<DiagnosticsRecorder> = Layer.effect(
    DiagnosticsRecorder,
    Effect.map(Clock.currentTimeMillis, (millis) => {
      const buffer = new DiagnosticsBuffer(millis)
      return makeFailOpenRecorder(buffer, buffer.generationStartedAt)
    })
  )

  /** The recorder over a given buffer (tests: shrunk limits, a buffer that throws). */
  static readonly layerWith = (buffer: DiagnosticsBuffer): Layer.Layer<DiagnosticsRecorder> =>
    Layer.sync(DiagnosticsRecorder, () => makeFailOpenRecorder(buffer, buffer.generationStartedAt))
}
