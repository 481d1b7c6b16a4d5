import { AgentLockUnavailable, WorkdirBusy, WorkdirRecoveryRequired } from "@serverfs/domain"
import { Configuration, type Workdir } from "@serverfs/policy"
import { AT } from "@serverfs/posix"
import { Effect, Scope } from "effect"
import { guardName, guardPresence } from "./lease/GuardFile.js"
import { holdLockFile, lockFileName } from "./lease/LockFile.js"

export { guardName } from "./lease/GuardFile.js"
export { lockFileName } from "./lease/LockFile.js"

/**
 * The probe role of the workdir lease shared with the Agent Bridge (bridge-internals §9); the
 * holder role is `makeLeaseHolder` (lease/LeaseHolder.ts), over the same lock-file open.
 *
 * When the bridge is enabled, every mutation opens the slot's lock file `<lock dir>/NN.lock`
 * read-only (lease/LockFile.ts: O_NOFOLLOW, O_NONBLOCK, regular, one link) — the bridge
 * pre-creates it; this process never creates or modifies lock files — and holds
 * `flock(LOCK_EX|LOCK_NB)` for the mutation:
 * - held by a bridge writer → WORKDIR_BUSY (this check wins over the guard);
 * - then an active-slot guard `<lock dir>/active/NN` → WORKDIR_RECOVERY_REQUIRED;
 * - a missing or unsafe lock file, or a guard that is not a regular file → AGENT_LOCK_UNAVAILABLE.
 * With the bridge disabled there is no lease (mutations serialize in-process only). Reads never
 * take it. flock is never called blocking on the event loop.
 */
export type LeaseError = WorkdirBusy | WorkdirRecoveryRequired | AgentLockUnavailable

export class LeaseManager extends Effect.Service<LeaseManager>()("@serverfs/workspace/LeaseManager", {
  effect: Effect.gen(function* () {
    const { global } = yield* Configuration
    const lockDir = global.agentLockDir

    /** The lease for the scope: the flock'ed lock file, then the guard check. */
    const acquire = (workdir: Workdir) =>
      Effect.gen(function* () {
        yield* holdLockFile(AT.FDCWD, `${lockDir}/${lockFileName(workdir.slot)}`).pipe(
          Effect.mapError((refused) =>
            refused.problem === "busy"
              ? new WorkdirBusy({ workdir: workdir.alias })
              : new AgentLockUnavailable({ workdir: workdir.alias })
          )
        )
        const guard = guardPresence(`${lockDir}/${guardName(workdir.slot)}`)
        if (guard === "guard") return yield* new WorkdirRecoveryRequired({ workdir: workdir.alias })
        if (guard === "unsafe") return yield* new AgentLockUnavailable({ workdir: workdir.alias })
      })

    /** Run `effect` holding the workdir's lease (closing the fd releases the flock). */
    const hold = <A, E, R>(
      workdir: Workdir,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | LeaseError, R> =>
      global.agentBridgeEnabled
        ? Effect.acquireUseRelease(
            Scope.make(),
            (scope) => Effect.zipRight(Scope.extend(acquire(workdir), scope), effect),
            (scope, exit) => Scope.close(scope, exit)
          )
        : effect

    return { hold } as const
  })
}) {}
