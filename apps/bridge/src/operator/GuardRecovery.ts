import {
  AgentProviderInactive,
  InvalidRequest,
  isTerminal,
  type LeaseRecoverResult,
  type LockPathUnsafe,
  type WorkdirBusy,
  WorkdirNotFound,
  type WorkdirRecoveryRequired
} from "@serverfs/domain"
import { SLOT_COUNT, slotId, type Workdir } from "@serverfs/policy"
import type { TaskStoreShape } from "@serverfs/store"
import { AgentMetrics, type AuditLog } from "@serverfs/telemetry-local"
import { Effect, Either, Option, type Scope } from "effect"
import type { BridgeLeases } from "../leases/BridgeLeases.js"
import type { RecoveryGuards } from "../tasks/RecoveryGuards.js"
import type { Terminations } from "../tasks/Terminations.js"

/**
 * `lease.recover` (issue 10): the supported way to reconcile a slot's recovery guard, replacing
 * removing `active/NN` by hand. The slot's writer lease is taken for the whole operation (in a
 * scope, released however it ends), so a live writer — one of this bridge's tasks, or any
 * process holding the flock — refuses it with WORKDIR_BUSY and nothing can start writing while
 * the guard is judged. Then the guard is reconciled exactly as the lazy path does it
 * (RecoveryGuards.reconcileForeign: the guard's runtime proves the run stopped → its task is
 * interrupted if still live in the store, the guard removed). A run that cannot be proven
 * stopped, an unconfigured runtime or an unreadable guard stays WORKDIR_RECOVERY_REQUIRED unless
 * the operator says `force` — they have checked the provider themselves.
 */
export interface GuardRecoveryDeps {
  readonly workdirs: ReadonlyArray<Workdir>
  readonly leases: BridgeLeases
  readonly guards: RecoveryGuards
  readonly store: TaskStoreShape
  readonly terminations: Terminations
  readonly audit: AuditLog
}

export type RecoverError =
  | InvalidRequest
  | WorkdirNotFound
  | WorkdirBusy
  | WorkdirRecoveryRequired
  | LockPathUnsafe

const statusOf = (store: TaskStoreShape, taskId: string | null) =>
  taskId === null
    ? Effect.succeed(null)
    : Effect.map(store.getTask(taskId), Option.match({ onNone: () => null, onSome: (t) => t.status }))

export const recoverGuard = (
  deps: GuardRecoveryDeps,
  slot: number,
  force: boolean
): Effect.Effect<LeaseRecoverResult, RecoverError> =>
  Effect.gen(function* (): Effect.fn.Return<LeaseRecoverResult, RecoverError, Scope.Scope> {
    if (!Number.isInteger(slot) || slot < 1 || slot > SLOT_COUNT)
      return yield* new InvalidRequest({ message: `slot must be within 1..${SLOT_COUNT}` })
    const workdir = deps.workdirs.find((w) => w.slot === slot)
    // A read-only workdir has no writer lease and never a guard: nothing to recover there.
    if (workdir === undefined || workdir.readOnly)
      return yield* new WorkdirNotFound({ workdir: slotId(slot) })
    const alias = workdir.alias
    yield* Effect.acquireRelease(deps.leases.acquire(slot, alias), () => deps.leases.release(slot))

    const state = yield* deps.leases.readGuard(slot)
    if (state._tag === "none")
      return {
        slot,
        workdir_alias: alias,
        outcome: "no_guard",
        proof: null,
        task_id: null,
        task_status: null
      }
    const taskId = state._tag === "valid" ? state.guard.task_id : null

    const reconciled = yield* Effect.either(deps.guards.reconcileForeign(slot, alias))
    if (Either.isLeft(reconciled) && !force) {
      yield* AgentMetrics.recovery("guard_kept")
      yield* deps.audit.emit("WARNING", "guard_kept", { slot, task_id: taskId, proof: "unproven" })
      return yield* reconciled.left
    }
    const proof = Either.isRight(reconciled) ? ("reconciled" as const) : ("forced" as const)
    if (proof === "forced") {
      // The operator's word replaces the runtime's proof: a task still live in the store ends.
      const status = yield* statusOf(deps.store, taskId)
      if (taskId !== null && status !== null && !isTerminal(status)) {
        yield* deps.terminations.terminate(
          taskId,
          new AgentProviderInactive({ message: "the operator cleared the task's recovery guard" })
        )
      }
      yield* deps.leases.removeGuard(slot)
    }
    yield* AgentMetrics.recovery("guard_cleared")
    yield* deps.audit.emit("INFO", "guard_recovered", { slot, task_id: taskId, proof })
    return {
      slot,
      workdir_alias: alias,
      outcome: "cleared",
      proof,
      task_id: taskId,
      task_status: yield* statusOf(deps.store, taskId)
    }
  }).pipe(Effect.scoped)
