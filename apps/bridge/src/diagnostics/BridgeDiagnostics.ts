import type { DiagnosticsSnapshot, DiagnosticsTaskResult, MetricsSnapshotResult } from "@serverfs/domain"
import { TaskStore } from "@serverfs/store"
import {
  DiagnosticsRecorder,
  type DurableTask,
  diagnosticsSnapshotOf,
  diagnosticsTaskResultOf,
  metricsSnapshot
} from "@serverfs/telemetry-local"
import { DateTime, Effect, Option } from "effect"

/**
 * The read side of the bridge's diagnostics and metrics (spec v0.22 §8): `diagnostics.snapshot`,
 * `diagnostics.task` and `metrics.snapshot`, answered from the recorder, the store and the
 * process-local metrics through their services — never mutating any of them. What the store
 * alone knows (does the task exist, does it predate this generation) is asked here; the
 * projections themselves are the recorder's (DiagnosticsProjection).
 */
export class BridgeDiagnostics extends Effect.Service<BridgeDiagnostics>()(
  "@serverfs/bridge/BridgeDiagnostics",
  {
    effect: Effect.gen(function* () {
      const recorder = yield* DiagnosticsRecorder
      const store = yield* TaskStore

      const snapshot: Effect.Effect<DiagnosticsSnapshot> = Effect.gen(function* () {
        const state = yield* recorder.state
        return diagnosticsSnapshotOf(state, yield* store.hasTaskCreatedBefore(state.generation_started_at))
      })

      const task = (taskId: string): Effect.Effect<DiagnosticsTaskResult> =>
        Effect.gen(function* () {
          const stored = yield* store.getTask(taskId)
          const { generation_started_at } = yield* recorder.state
          const durable: DurableTask = Option.match(stored, {
            onNone: () => ({ _tag: "Unknown" }) as const,
            onSome: (t) =>
              ({
                _tag: "Known",
                status: t.status,
                createdBeforeGeneration:
                  DateTime.toEpochMillis(DateTime.unsafeMake(t.created_at)) <
                  DateTime.toEpochMillis(DateTime.unsafeMake(generation_started_at))
              }) as const
          })
          return diagnosticsTaskResultOf(taskId, durable, yield* recorder.lookup(taskId))
        })

      /** The metrics since this generation began (they reset with the process, as the recorder does). */
      const metrics: Effect.Effect<MetricsSnapshotResult> = Effect.flatMap(recorder.state, (state) =>
        metricsSnapshot(state.generation_started_at)
      )

      return { snapshot, task, metrics } as const
    })
  }
) {}
