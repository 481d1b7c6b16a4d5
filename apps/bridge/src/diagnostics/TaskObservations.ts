import {
  type InteractionClass,
  type OperationOutcome,
  type RecoveryOutcome,
  type RuntimeFamily,
  runtimeFamilyOf,
  type TerminalOutcome
} from "@serverfs/domain"
import type { TaskRecord, TransitionResult } from "@serverfs/store"
import { type DiagnosticStaging, DiagnosticsRecorder } from "@serverfs/telemetry-local"
import { Clock, DateTime, Effect, Option } from "effect"
import { MetricProjection } from "./MetricProjection.js"
import { leaseOutcomeOf } from "./Outcomes.js"

/** A moment: in the recorder's time base (monotonic ms) and in the Clock's nanoseconds (metrics). */
interface Mark {
  readonly ms: number
  readonly nanos: bigint
}

/** The end of an external wait (spec v0.22 §9.2): answered, expired, staled or cancelled. */
export type WaitEnd = Extract<OperationOutcome, "ok" | "expired" | "stale" | "cancelled">

/**
 * The bridge's observations, one method per authoritative seam (spec v0.22 §9): each takes the
 * value the seam decided — a lease exit, a committed transition, a recovery outcome — and feeds
 * the metric and the diagnostics recorder from that same value. Every observation is fail-open:
 * a defect of the recorder or of the metric projection is logged and dropped, so it can never
 * change a task, a lease, a guard or a recovery (§7.4, §9.3). Interruption is not caught.
 */
export class TaskObservations extends Effect.Service<TaskObservations>()(
  "@serverfs/bridge/TaskObservations",
  {
    effect: Effect.gen(function* () {
      const recorder = yield* DiagnosticsRecorder
      const metrics = yield* MetricProjection
      // Tasks this process created that have neither started nor ended: the queue depth counts
      // exactly these, so every path out (start, cancel, a scheduling failure) takes it down once,
      // and a task left queued by a previous process never does. Bounded by the active-task cap.
      const queued = new Map<string, { readonly at: Mark; readonly runtime: RuntimeFamily }>()

      /**
       * Run one observation; a defect (a throw, sync or not) is logged and never escapes. Atomic
       * (uninterruptible, it never waits): the queue bookkeeping and its metric move together.
       */
      const isolated = (seam: string, observe: () => Effect.Effect<void>): Effect.Effect<void> =>
        Effect.suspend(observe).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.logWarning("an observation failed; the task is unaffected", {
              seam,
              defect: String(defect)
            })
          ),
          Effect.uninterruptible
        )

      const mark: Effect.Effect<Mark> = Effect.gen(function* () {
        const nanos = yield* Clock.currentTimeNanos
        const ms = yield* recorder.now.pipe(Effect.catchAllDefect(() => Effect.succeed(Number(nanos) / 1e6)))
        return { ms, nanos }
      })
      const secondsSince = (from: Mark) =>
        Effect.map(Clock.currentTimeNanos, (now) => Number(now - from.nanos) / 1e9)

      /** Close the open segment of `closing` and open one of `opening` (recorder only). */
      const segment = (
        taskId: string,
        closing: Parameters<typeof recorder.end>[1] | null,
        opening: Parameters<typeof recorder.begin>[1] | null,
        interaction?: InteractionClass,
        outcome?: OperationOutcome
      ) =>
        isolated(`segment ${opening ?? closing}`, () =>
          Effect.zipRight(
            closing === null ? Effect.void : recorder.end(taskId, closing, outcome),
            opening === null ? Effect.void : recorder.begin(taskId, opening, interaction)
          )
        )

      return {
        /** §9.1 step 2: a genuinely new submission (the idempotency check missed). */
        stage: Effect.suspend(() => recorder.stage).pipe(
          Effect.map(Option.some),
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logWarning("diagnostic staging failed", { defect: String(defect) }),
              Option.none()
            )
          )
        ),

        /**
         * §9.1 step 3: time the writer-lease acquisition (`acquire`: the flock and the reconcile of
         * a foreign guard) and classify its exit once, for the metric and the staged operation.
         */
        leaseAcquisition:
          (staging: Option.Option<DiagnosticStaging>) =>
          <A, E, R>(acquire: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
            Effect.flatMap(mark, (start) =>
              Effect.onExit(acquire, (exit) => {
                const outcome = leaseOutcomeOf(exit)
                return Effect.zipRight(
                  isolated("lease metric", () =>
                    Effect.flatMap(secondsSince(start), (s) => metrics.leaseAcquire(outcome, s))
                  ),
                  isolated("lease operation", () =>
                    Option.match(staging, {
                      onNone: () => Effect.void,
                      onSome: (s) => recorder.staged(s, "agent.lease_acquire", start.ms, outcome)
                    })
                  )
                )
              })
            ),

        /** §9.1 step 4: the task row is committed — the slot is admitted and the task is queued. */
        admitted: (staging: Option.Option<DiagnosticStaging>, task: TaskRecord): Effect.Effect<void> => {
          const runtime = runtimeFamilyOf(task.runtime)
          return Effect.zipRight(
            isolated("queued", () =>
              Effect.flatMap(mark, (at) => {
                queued.set(task.task_id, { at, runtime })
                return metrics.queued
              })
            ),
            isolated("admit", () =>
              Effect.zipRight(
                Option.match(staging, {
                  onNone: () => Effect.void,
                  onSome: (s) => recorder.admit(s, task.task_id, runtime)
                }),
                recorder.begin(task.task_id, "agent.queue_wait")
              )
            )
          )
        },

        /** `starting` committed: the queue wait ends, the bridge-owned runtime start begins. */
        started: (taskId: string): Effect.Effect<void> =>
          Effect.zipRight(
            isolated("dequeued", () => {
              const entry = queued.get(taskId)
              if (entry === undefined) return Effect.void
              queued.delete(taskId)
              return Effect.flatMap(secondsSince(entry.at), (s) => metrics.dequeued(entry.runtime, s))
            }),
            segment(taskId, "agent.queue_wait", "agent.runtime_start")
          ),

        /** `running` committed: dispatch is done, the provider's first execution stretch begins. */
        running: (taskId: string) => segment(taskId, "agent.runtime_start", "agent.execution"),

        /** The provider returned or failed: its execution ends, finalization runs to the terminal move. */
        providerReturned: (taskId: string, succeeded: boolean) =>
          segment(taskId, "agent.execution", "agent.finalization", undefined, succeeded ? "ok" : "error"),

        /** §9.2: the pending request committed (the task waits): execution pauses, the external wait begins. */
        waiting: (taskId: string, kind: InteractionClass) =>
          segment(taskId, "agent.execution", "agent.waiting_external", kind),

        /** The wait ended at its commit (an answer) or its terminal boundary (expiry, stale, cancel). */
        waitEnded: (taskId: string, outcome: WaitEnd) =>
          segment(taskId, "agent.waiting_external", null, undefined, outcome),

        /** Control is back with the provider: the next execution stretch (the wait closed if still open). */
        resumed: (taskId: string, outcome: WaitEnd) =>
          segment(taskId, "agent.waiting_external", "agent.execution", undefined, outcome),

        /**
         * §9.3: from the SAME successful terminal transition — the terminal metric (duration since
         * created_at), the queue leaving if it never started, and the one seal (closing an
         * interaction the transition staled first).
         */
        terminal: (result: TransitionResult, outcome: TerminalOutcome): Effect.Effect<void> => {
          const task = result.task
          return Effect.all(
            [
              isolated("left queue", () => {
                if (!queued.delete(task.task_id)) return Effect.void
                return metrics.leftQueue
              }),
              isolated("terminal metric", () => {
                const created = DateTime.toEpochMillis(DateTime.unsafeMake(task.created_at))
                const completed = DateTime.toEpochMillis(
                  DateTime.unsafeMake(task.completed_at ?? task.updated_at)
                )
                return metrics.taskTerminal(
                  outcome,
                  runtimeFamilyOf(task.runtime),
                  (completed - created) / 1000
                )
              }),
              isolated("seal", () =>
                Effect.zipRight(
                  Option.match(result.staledRequestId, {
                    onNone: () => Effect.void,
                    onSome: () =>
                      recorder.end(
                        task.task_id,
                        "agent.waiting_external",
                        outcome === "cancelled" ? "cancelled" : "stale"
                      )
                  }),
                  recorder.seal(task.task_id, outcome)
                )
              )
            ],
            { discard: true }
          )
        },

        /** §9.4: a task left by a previous process is being reconciled: its restarted slot, and when it began. */
        recoveryStarted: (task: TaskRecord): Effect.Effect<Mark> =>
          Effect.zipLeft(
            mark,
            isolated("admit restarted", () =>
              recorder.admitRestarted(task.task_id, runtimeFamilyOf(task.runtime))
            )
          ),

        /** One recovery decided: the metric and the task's `agent.recovery` operation, from the same outcome. */
        recovered: (taskId: string, start: Mark, outcome: RecoveryOutcome): Effect.Effect<void> =>
          Effect.zipRight(
            isolated("recovery metric", () => metrics.recovery(outcome)),
            isolated("recovery operation", () =>
              recorder.operation(taskId, "agent.recovery", start.ms, outcome)
            )
          ),

        /** A recovery guard reconciled: cleared (its run proven stopped) or kept (it still blocks). */
        guardDecision: (cleared: boolean): Effect.Effect<void> =>
          isolated("guard metric", () => metrics.recovery(cleared ? "guard_cleared" : "guard_kept"))
      } as const
    })
  }
) {}
