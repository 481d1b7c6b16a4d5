import type { RecorderState } from "@serverfs/domain"
import { type Clock, Effect } from "effect"
import type { DiagnosticsBuffer } from "./DiagnosticsBuffer.js"
import type { DiagnosticStaging, DiagnosticsRecorderService, TraceLookup } from "./DiagnosticsRecorder.js"
import { StagingContext } from "./StagingContext.js"

/** Monotonic milliseconds from the Clock's nanoseconds (microsecond precision, exact in a double). */
const monotonicMs = (clock: Clock.Clock): number => Number(clock.unsafeCurrentTimeNanos() / 1000n) / 1000

/** What `stage` hands out when staging itself failed: the buffer does not know it, so admit records nothing. */
const INERT_STAGING: DiagnosticStaging = Object.freeze({ _tag: "DiagnosticStaging" as const })

/**
 * The recorder service over a buffer (spec v0.22 §7.4, §9.3): every method is one synchronous
 * step — no I/O, no fiber, no timer — and fail-open: whatever the buffer throws (a bug, a corrupt
 * state) is caught here, counted in `record_failures`, and the method still succeeds, so a
 * recorder fault can never change the outcome of the task, lease or recovery that called it.
 * The failure count lives here, not in the buffer, so it survives a buffer that cannot count.
 */
export const makeFailOpenRecorder = (
  buffer: DiagnosticsBuffer,
  generationStartedAt: string
): DiagnosticsRecorderService => {
  let recordFailures = 0

  const guarded = (step: (clock: Clock.Clock) => void): Effect.Effect<void> =>
    Effect.clockWith((clock) =>
      Effect.sync(() => {
        try {
          step(clock)
        } catch {
          recordFailures += 1
        }
      })
    )

  const emptyState = (): RecorderState => ({
    generation_started_at: generationStartedAt,
    retained_records: 0,
    retained_bytes: 0,
    retained_tasks: 0,
    active_tasks: 0,
    terminal_tasks: 0,
    counters: {
      record_failures: recordFailures,
      admission_failures: 0,
      ordinary_records_dropped: 0,
      truncated_tasks: 0,
      oversized_rejections: 0,
      evictions: 0
    }
  })

  return {
    stage: Effect.clockWith((clock) =>
      Effect.sync((): DiagnosticStaging => {
        try {
          return buffer.stage(monotonicMs(clock))
        } catch {
          recordFailures += 1
          return INERT_STAGING
        }
      })
    ),
    staged: (staging, kind, startedAt, outcome) =>
      guarded((clock) => {
        if (staging instanceof StagingContext)
          buffer.staged(staging, kind, startedAt, monotonicMs(clock), outcome)
      }),
    admit: (staging, taskId, runtime) =>
      guarded(() => {
        if (!(staging instanceof StagingContext)) {
          buffer.markUnavailable(taskId)
          return
        }
        try {
          buffer.admit(staging, taskId, runtime)
        } catch (fault) {
          // remember why this task will have no trace, if the buffer still can; then count the fault
          try {
            buffer.markUnavailable(taskId)
          } catch {}
          throw fault
        }
      }),
    admitRestarted: (taskId, runtime) =>
      guarded((clock) => buffer.admitRestarted(taskId, runtime, monotonicMs(clock))),
    begin: (taskId, kind, interaction) =>
      guarded((clock) => buffer.begin(taskId, kind, monotonicMs(clock), interaction)),
    end: (taskId, kind, outcome) => guarded((clock) => buffer.end(taskId, kind, monotonicMs(clock), outcome)),
    operation: (taskId, kind, startedAt, outcome) =>
      guarded((clock) => buffer.operation(taskId, kind, startedAt, monotonicMs(clock), outcome)),
    seal: (taskId, outcome) =>
      guarded((clock) => buffer.seal(taskId, outcome, monotonicMs(clock), clock.unsafeCurrentTimeMillis())),
    now: Effect.clockWith((clock) => Effect.sync(() => monotonicMs(clock))),
    state: Effect.sync((): RecorderState => {
      try {
        return buffer.state(recordFailures)
      } catch {
        recordFailures += 1
        return emptyState()
      }
    }),
    lookup: (taskId) =>
      Effect.clockWith((clock) =>
        Effect.sync((): TraceLookup => {
          try {
            return buffer.lookup(taskId, monotonicMs(clock))
          } catch {
            recordFailures += 1
            return { _tag: "Absent", reason: "recording_unavailable" }
          }
        })
      )
  }
}
