import * as path from "node:path"
import { isDeepStrictEqual } from "node:util"
import { type AttachProof, InteractionEnded } from "@serverfs/adapters/port"
import { type AgentError, HostPathRedaction, isWaiting } from "@serverfs/domain"
import { Configuration } from "@serverfs/policy"
import { type PendingRequestRecord, type TaskRecord, TaskStore } from "@serverfs/store"
import { Clock, DateTime, Deferred, Effect, Either, Exit, Option, Scope } from "effect"
import { TaskObservations } from "../diagnostics/TaskObservations.js"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { InteractionBroker } from "./InteractionBroker.js"
import { LiveTaskRegistry, newLiveTask } from "./LiveTasks.js"
import { RecoveryGuards } from "./RecoveryGuards.js"
import { ResultPublisher } from "./ResultPublisher.js"
import { TaskControl } from "./TaskControl.js"
import { Terminations } from "./Terminations.js"
import { TurnRunner } from "./TurnRunner.js"
import { holdWriterLease } from "./WriterLease.js"

/** How long the adapter may take to prove the turn live (connect, resume, read, replays). */
const ATTACH_BOUND = "60 seconds"
/** How long a counted replay may take to reach the sink (it is relayed on a fiber of its own). */
const REBIND_BOUND = "10 seconds"
/** How long a refused attempt's turn fiber may take to stop what it attached to. */
const STOP_BOUND = "15 seconds"

const millis = (iso: string): number => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

/** The replay is the stored request: same kind, same normalized (redacted) payload. */
const sameRequest = (stored: PendingRequestRecord, kind: string, payload: unknown): boolean =>
  stored.kind === kind &&
  isDeepStrictEqual(JSON.parse(stored.payload_json), JSON.parse(JSON.stringify(payload)))

/**
 * Restart re-attach (issue 15 item 7; spec v0.7 §2.3, bridge-internals §10 REATTACHED): a task
 * the previous process left running or waiting is followed again when — and only when — its
 * adapter proves the exact native turn still runs, and everything the task held comes back to
 * this process: the writer lease (re-acquired), its own recovery guard (taken over, updated),
 * and, for a waiting task, the SAME stored request, re-bound to the provider's replay of it —
 * one replay, of that request, or nothing is re-bound. The turn then goes on exactly as a live
 * run (TurnRunner's sink, result, deadline). Anything short of that proof: `attempt` answers
 * false and Recovery interrupts the task as before, never re-running it.
 */
export class Reattachment extends Effect.Service<Reattachment>()("@serverfs/bridge/Reattachment", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const registry = yield* RuntimeRegistry
    const leases = yield* BridgeLeases
    const guards = yield* RecoveryGuards
    const broker = yield* InteractionBroker
    const runner = yield* TurnRunner
    const control = yield* TaskControl
    const live = yield* LiveTaskRegistry
    const terminations = yield* Terminations
    const results = yield* ResultPublisher
    const observations = yield* TaskObservations
    const { workdirs } = yield* Configuration
    const allRoots = workdirs.map((w) => w.hostPath)

    /** The stored request a waiting task waits on (pending, not expired); none for a running one. */
    const storedWait = (task: TaskRecord, now: number) =>
      Effect.gen(function* () {
        if (task.pending_request_id === null) return Option.none<PendingRequestRecord>()
        const stored = yield* store.getPendingRequest(task.pending_request_id)
        return Option.filter(stored, (r) => r.status === "pending" && millis(r.expires_at) > now)
      })

    /**
     * Try to re-attach `task`; true when its turn goes on in this process. On false nothing of
     * the attempt is left running; the caller interrupts the task with `cause` (used here only
     * if the attempt's fiber must be stopped first, so that it never ends the task otherwise).
     */
    const attempt = (task: TaskRecord, cause: AgentError): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const adapter = registry.get(task.runtime)
        const workdir = workdirs.find((w) => w.alias === task.workdir_alias)
        const sessionId = task.native_session_id
        const turnId = task.native_turn_id
        if (
          // Only a runtime that keeps its turns outside the bridge ("native") is ever attempted.
          adapter?.inFlightRecovery !== "native" ||
          adapter.reattach === undefined ||
          workdir === undefined ||
          sessionId === null ||
          turnId === null ||
          (task.status !== "running" && !isWaiting(task.status)) ||
          millis(task.deadline_at) <= now
        )
          return false
        const reattach = adapter.reattach
        const waitingOn = yield* storedWait(task, now)
        // A waiting task whose request is gone or expired, or a running one with a request: unprovable.
        if (isWaiting(task.status) !== Option.isSome(waitingOn)) return false

        const scope = yield* Scope.make()
        const liveTask = newLiveTask(task.task_id, scope)
        let confirmed = false
        let returned = false
        const held = yield* Effect.gen(function* () {
          if (task.profile !== "workspace-write") return
          yield* holdWriterLease(leases, liveTask, workdir)
          // Removed at the end only if the turn is proven stopped: it returned after this process
          // followed it, or the adapter's reconcile says so.
          yield* guards.adoptScoped(task, () => returned && confirmed)
        }).pipe(Scope.extend(scope), Effect.either)
        if (Either.isLeft(held)) {
          yield* Scope.close(scope, Exit.void)
          return false
        }

        const decided = yield* Deferred.make<boolean>()
        const rebound = yield* Deferred.make<boolean>()
        let replaying = true
        let consumed = false
        /** During the attach, an interaction is a replay: only the stored request re-binds. */
        const interact: InteractionBroker["interact"] = (t, lt, kind, payload) =>
          Effect.suspend(() => {
            if (!replaying) return broker.interact(t, lt, kind, payload)
            const stored = Option.getOrUndefined(waitingOn)
            const first = !consumed
            consumed = true
            if (stored !== undefined && first && sameRequest(stored, kind, payload)) {
              return Effect.zipRight(Deferred.succeed(rebound, true), broker.rebind(t, lt, kind, stored))
            }
            return Effect.zipRight(
              Deferred.succeed(rebound, false),
              Effect.fail(new InteractionEnded({ reason: "stale" }))
            )
          })
        const confirm = (proof: AttachProof) =>
          Effect.gen(function* () {
            let ok = proof.replayed === (Option.isSome(waitingOn) ? 1 : 0)
            if (ok && Option.isSome(waitingOn)) {
              ok = yield* Deferred.await(rebound).pipe(
                Effect.timeout(REBIND_BOUND),
                Effect.orElseSucceed(() => false)
              )
            }
            replaying = !ok
            confirmed = ok
            yield* Deferred.succeed(decided, ok)
            return ok
          })

        const redaction = new HostPathRedaction(workdir.hostPath, allRoots)
        const body = Effect.gen(function* () {
          liveTask.providerStopped = false
          const outcome = yield* reattach(
            {
              taskId: task.task_id,
              sessionId,
              turnId,
              cwd: path.join(workdir.hostPath, task.relative_cwd),
              workdirRoot: workdir.hostPath,
              waiting: Option.isSome(waitingOn)
            },
            runner.sinkFor(task, liveTask, redaction, interact),
            confirm
          ).pipe(Effect.either)
          liveTask.providerStopped = true
          returned = true
          // Not re-attached: Recovery ends the task (BRIDGE_RESTARTED), not the turn's failure.
          if (!confirmed) return yield* Deferred.succeed(decided, false)
          yield* observations.providerReturned(task.task_id, outcome._tag === "Right")
          if (outcome._tag === "Right")
            yield* results.publish(task.task_id, outcome.right.finalText, redaction)
          else yield* terminations.terminate(task.task_id, outcome.left)
        })
        yield* runner.launch(task, liveTask, body)

        const ok = yield* Deferred.await(decided).pipe(
          Effect.timeout(ATTACH_BOUND),
          Effect.orElseSucceed(() => false)
        )
        if (ok) {
          yield* Effect.forkIn(Effect.interruptible(control.watchDeadline(task)), scope)
          if (!isWaiting(task.status)) yield* observations.running(task.task_id)
          return true
        }
        // The turn fiber stops what it attached to (the adapter asks Codex to stop the turn).
        const stopped = yield* live.awaitTurn(task.task_id).pipe(Effect.timeout(STOP_BOUND), Effect.option)
        if (Option.isNone(stopped)) {
          // Ended first, so that interrupting the fiber cannot record a shutdown instead.
          yield* terminations.terminate(task.task_id, cause)
          yield* live.interruptTurn(task.task_id)
        }
        return false
      })

    return { attempt } as const
  })
}) {}
