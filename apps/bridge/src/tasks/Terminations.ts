import type { InteractionEnded } from "@serverfs/adapters/port"
import {
  type AgentError,
  AgentInteractionTimedOut,
  AgentProviderInactive,
  AgentTaskTimedOut,
  BridgeRestarted,
  BridgeSchedulingFailed,
  BridgeShutdown,
  HostPathRedaction,
  isWaiting,
  type TaskStatus
} from "@serverfs/domain"
import { Configuration } from "@serverfs/policy"
import { TaskStore, type TransitionPatch, type TransitionResult } from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { Effect, Option } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { TaskObservations } from "../diagnostics/TaskObservations.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { LiveTaskRegistry } from "./LiveTasks.js"
import { TaskEvents } from "./TaskEvents.js"
import { TaskStatusFeed } from "./TaskStatusFeed.js"

/**
 * Causes that interrupt a task rather than fail it: the task did not fail on its own account —
 * the bridge or the human stopped it (spec v0.3 §18, bridge-internals §9/§10).
 */
const INTERRUPTING: ReadonlyArray<new (args: { message: string }) => AgentError> = [
  AgentTaskTimedOut,
  AgentInteractionTimedOut,
  AgentProviderInactive,
  BridgeShutdown,
  BridgeRestarted,
  BridgeSchedulingFailed
]
const interrupts = (cause: AgentError): boolean => INTERRUPTING.some((c) => cause instanceof c)

type End = "succeeded" | "failed" | "cancelled" | "interrupted"

/** An event the bridge commits with a status change, in the transition's own transaction. */
interface MoveEvent {
  readonly type: string
  readonly payload: Record<string, unknown>
}

/**
 * The one place a task's status changes (bridge-internals §6/§9): every move goes through the
 * store's transition table, is published on the status feed and audited. A task ends through
 * `terminate(taskId, cause)` with a frozen-error instance — its code, its message (redacted:
 * host paths never reach the store, whichever adapter produced the text), the event type and
 * payload all follow from it — or through `succeed` / `cancelled`.
 */
export class Terminations extends Effect.Service<Terminations>()("@serverfs/bridge/Terminations", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const events = yield* TaskEvents
    const live = yield* LiveTaskRegistry
    const feed = yield* TaskStatusFeed
    const audit = yield* AuditLog
    const registry = yield* RuntimeRegistry
    const settings = yield* BridgeSettingsTag
    const observations = yield* TaskObservations
    const { workdirs } = yield* Configuration
    // Messages only: every configured root becomes <workdir>, any other absolute path <path>.
    const messages = new HostPathRedaction(
      "",
      workdirs.map((w) => w.hostPath)
    )

    /** A move's event as the store takes it, under the event stream's limits. */
    const withLimits = (event: MoveEvent) => ({
      eventType: event.type,
      payload: event.payload,
      limits: events.limits
    })

    /** A move's event the store refused: logged and dropped, as the event writer does. */
    const droppedIfRefused = (taskId: string, event: MoveEvent, result: TransitionResult) =>
      Option.match(result.eventRefusal, {
        onNone: () => Effect.void,
        onSome: (refusal) => events.dropped(taskId, event.type, refusal)
      })

    /**
     * Move a task to `to` unless it already is terminal. Its queued events are committed first;
     * the status, the staling of its pending request and the terminal event then go in one
     * transaction, so no reader sees the end of a task before everything that led there.
     * Returns whether this call made the change.
     */
    const end = (taskId: string, to: End, patch: TransitionPatch, event: MoveEvent): Effect.Effect<boolean> =>
      Effect.zipRight(
        events.flush,
        // The commit and what follows from it as one uninterruptible step: a task that ended is
        // published, audited, counted and sealed even if the caller is interrupted meanwhile.
        Effect.uninterruptible(
          store.transition(taskId, to, patch, withLimits(event)).pipe(
            Effect.tap((result) =>
              Effect.all(
                [
                  feed.publish({ taskId, status: to }),
                  Option.match(result.staledRequestId, {
                    onNone: () => Effect.void,
                    onSome: (requestId) =>
                      live.failWaiter(taskId, requestId, to === "cancelled" ? "cancelled" : "stale")
                  }),
                  droppedIfRefused(taskId, event, result),
                  audit.emit("INFO", "task_transition", {
                    task_id: taskId,
                    status: to,
                    error_code: patch.error_code ?? undefined
                  }),
                  // Spec v0.22 §9.3: the terminal metric and the one seal, from this same applied
                  // transition. Fail-open: neither can change the boolean returned below.
                  observations.terminal(result, to)
                ],
                { discard: true }
              )
            )
          )
        )
      ).pipe(
        Effect.as(true),
        // The transition table refused it: the task already ended (or never may end this way).
        Effect.catchTag("INVALID_TASK_TRANSITION", () => Effect.succeed(false)),
        Effect.catchTag("AGENT_TASK_NOT_FOUND", () => Effect.succeed(false))
      )

    /**
     * End a task with a frozen error. A cause the bridge imposes interrupts it; any other fails
     * it — except a task still queued or waiting on an interaction, which cannot fail (the
     * transition table) and is interrupted.
     */
    const terminate = (taskId: string, cause: AgentError): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        let to: End = "interrupted"
        if (!interrupts(cause)) {
          const current = yield* store.getTask(taskId)
          if (Option.isNone(current)) return false
          const status = current.value.status
          to = isWaiting(status) || status === "queued" ? "interrupted" : "failed"
        }
        return yield* end(
          taskId,
          to,
          { error_code: cause._tag, error_message: messages.message(cause.message) },
          { type: `task.${to}`, payload: { error_code: cause._tag } }
        )
      })

    /** Ask the provider to stop a task's turn, bounded; the bridge's decision stands either way. */
    const stopProvider = (runtime: string, taskId: string): Effect.Effect<void> => {
      const adapter = registry.get(runtime)
      return adapter === undefined
        ? Effect.void
        : adapter
            .cancel(taskId)
            .pipe(Effect.timeout(`${settings.providerCancelTimeoutSeconds} seconds`), Effect.ignore)
    }

    /**
     * The one way a live run is stopped once the bridge has committed the task's end (cancel,
     * a `cancel_task` decision, the deadline, an expired or refused interaction, shutdown): the
     * interactions its provider waits on end, the provider is told to stop (its adapter's
     * `cancel`, bounded: an adapter holding an interrupted turn's end for this signal lets it go
     * now), then the turn fiber is interrupted and awaited — its scope releases the recovery
     * guard and the lease. Detached, because a caller may be a fiber this very stop ends (an
     * expiry timer is interrupted when its interaction ends; the deadline lives in the task's
     * scope). The returned fiber ends once the turn has; a task not live here is a no-op.
     */
    const stopRun = (runtime: string, taskId: string, reason: InteractionEnded["reason"]) =>
      live.detach(
        Effect.suspend(() =>
          live.has(taskId)
            ? Effect.zipRight(
                live.failAllWaiters(taskId, reason),
                Effect.zipRight(stopProvider(runtime, taskId), live.interruptTurn(taskId))
              )
            : Effect.void
        )
      )

    return {
      terminate,
      /** The human (or a `cancel_task` decision) cancelled the task. */
      cancelled: (taskId: string): Effect.Effect<boolean> =>
        end(taskId, "cancelled", {}, { type: "task.cancelled", payload: {} }),
      /** The task's result is stored: it succeeded. */
      succeed: (
        taskId: string,
        patch: TransitionPatch,
        payload: Record<string, unknown>
      ): Effect.Effect<boolean> => end(taskId, "succeeded", patch, { type: "task.completed", payload }),
      /**
       * A non-terminal move (queued → starting → running); false when the table refused it. An
       * event given here is committed in the move's own transaction (one commit fewer than an
       * append after it, issue 12).
       */
      advance: (taskId: string, to: Exclude<TaskStatus, End>, event?: MoveEvent): Effect.Effect<boolean> =>
        store.transition(taskId, to, {}, event === undefined ? undefined : withLimits(event)).pipe(
          Effect.tap((result) =>
            Effect.zipRight(
              feed.publish({ taskId, status: to }),
              event === undefined ? Effect.void : droppedIfRefused(taskId, event, result)
            )
          ),
          Effect.as(true),
          Effect.catchAll(() => Effect.succeed(false))
        ),
      stopRun
    } as const
  })
}) {}
