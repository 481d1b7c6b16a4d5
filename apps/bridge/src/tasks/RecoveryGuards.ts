import type { RecordedTurn } from "@serverfs/adapters/port"
import { type AgentError, AgentProviderInactive, WorkdirRecoveryRequired } from "@serverfs/domain"
import { type TaskRecord, TaskStore } from "@serverfs/store"
import { DateTime, Effect, Option } from "effect"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { Terminations } from "./Terminations.js"

/** The provider turn a task record names, as an adapter's reconcile takes it. */
export const recordedTurn = (task: TaskRecord): RecordedTurn => ({
  taskId: task.task_id,
  sessionId: task.native_session_id,
  turnId: task.native_turn_id
})

const guardFor = (task: TaskRecord, updatedAt: string) => ({
  schema_version: 1 as const,
  slot: task.workdir_slot,
  task_id: task.task_id,
  runtime: task.runtime,
  workdir_alias: task.workdir_alias,
  correlation_id: task.correlation_id,
  native_session_id: task.native_session_id,
  native_turn_id: task.native_turn_id,
  created_at: task.created_at,
  updated_at: updatedAt
})

/**
 * The recovery guards of workspace-write tasks (spec v0.7 §2.3, bridge-internals §9/§10): a
 * guard is published when the task is scheduled, kept current with the native ids, and removed
 * only when the provider run is proven stopped — so MCP mutations fail closed after a crash.
 */
export class RecoveryGuards extends Effect.Service<RecoveryGuards>()("@serverfs/bridge/RecoveryGuards", {
  effect: Effect.gen(function* () {
    const leases = yield* BridgeLeases
    const store = yield* TaskStore
    const registry = yield* RuntimeRegistry
    const terminations = yield* Terminations

    /** Remove a slot's guard if (and only if) it belongs to `taskId`; whether it did (the recovery metric). */
    const clearGuardOf = (slot: number, taskId: string): Effect.Effect<boolean> =>
      Effect.flatMap(leases.readGuard(slot), (state) =>
        state._tag === "valid" && state.guard.task_id === taskId
          ? Effect.as(leases.removeGuard(slot), true)
          : Effect.succeed(false)
      )

    /**
     * Publish a freshly inserted task's guard into the task's scope: released when the scope
     * closes, if the provider's run is proven stopped — it never started or it returned, or its adapter's reconcile
     * says it is not active. Otherwise the guard stays and blocks the workdir until a restart
     * or the next writer reconciles it.
     */
    const publishScoped = (task: TaskRecord, providerStopped: () => boolean) =>
      Effect.acquireRelease(leases.publishGuard(guardFor(task, task.created_at)), () =>
        releaseIfStopped(task, providerStopped)
      )

    /**
     * A task re-attached after a restart takes over the guard its previous process published
     * (it must be the task's own, valid): updated now, then released as `publishScoped` releases.
     */
    const adoptScoped = (task: TaskRecord, providerStopped: () => boolean) =>
      Effect.acquireRelease(
        Effect.flatMap(
          leases.readGuard(task.workdir_slot),
          (state): Effect.Effect<void, AgentError | WorkdirRecoveryRequired> =>
            state._tag === "valid" && state.guard.task_id === task.task_id
              ? Effect.flatMap(DateTime.now, (now) =>
                  leases.writeGuard(guardFor(task, DateTime.formatIso(now)))
                )
              : Effect.fail(new WorkdirRecoveryRequired({ workdir: task.workdir_alias }))
        ),
        () => releaseIfStopped(task, providerStopped)
      )

    /** The end of a task's guard: removed if the provider's run is proven stopped, else kept. */
    const releaseIfStopped = (task: TaskRecord, providerStopped: () => boolean) =>
      Effect.gen(function* () {
        let stopped = providerStopped()
        const adapter = registry.get(task.runtime)
        if (!stopped && adapter !== undefined) {
          const current = yield* store.getTask(task.task_id)
          const result = yield* adapter.reconcile(
            Option.match(current, {
              onNone: (): RecordedTurn => ({ taskId: task.task_id, sessionId: null, turnId: null }),
              onSome: recordedTurn
            })
          )
          stopped = result.providerActive === false
        }
        if (stopped) yield* clearGuardOf(task.workdir_slot, task.task_id)
      })

    /** Keep the guard's native ids current, so a restart can reconcile the exact turn. */
    const updateGuard = (task: TaskRecord): Effect.Effect<void> =>
      task.profile !== "workspace-write"
        ? Effect.void
        : Effect.flatMap(leases.readGuard(task.workdir_slot), (state) =>
            state._tag === "valid" && state.guard.task_id === task.task_id
              ? Effect.flatMap(DateTime.now, (now) =>
                  leases.writeGuard(guardFor(task, DateTime.formatIso(now))).pipe(Effect.ignore)
                )
              : Effect.void
          )

    /** A workspace-write slot's guard left by a run this process does not own (lazy path, §10). */
    const reconcileForeign = (slot: number, alias: string): Effect.Effect<void, WorkdirRecoveryRequired> =>
      Effect.gen(function* () {
        const state = yield* leases.readGuard(slot)
        if (state._tag === "none") return
        const blocked = new WorkdirRecoveryRequired({ workdir: alias })
        if (state._tag === "invalid") return yield* blocked
        const guarded = yield* store.getTask(state.guard.task_id)
        const adapter = registry.get(state.guard.runtime)
        if (Option.isNone(guarded) || adapter === undefined) return yield* blocked
        const result = yield* adapter.reconcile(recordedTurn(guarded.value))
        if (result.providerActive !== false) return yield* blocked
        yield* terminations.terminate(
          guarded.value.task_id,
          new AgentProviderInactive({ message: "the provider run is no longer active" })
        )
        yield* leases.removeGuard(slot)
      })

    return { clearGuardOf, publishScoped, adoptScoped, updateGuard, reconcileForeign } as const
  })
}) {}
