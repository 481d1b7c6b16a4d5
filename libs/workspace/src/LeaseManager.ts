import { AgentLockUnavailable, WorkdirBusy, WorkdirRecoveryRequired } from "@serverfs/domain"
import { Configuration, slotId, type Workdir } from "@serverfs/policy"
import { AT, close, flock, fstat, fstatat, isWouldBlock, LOCK, O, openat } from "@serverfs/posix"
import { Effect } from "effect"
import { isRegular } from "./FileKind.js"
import { codeOf } from "./OsError.js"

/**
 * The MCP side of the workdir lease shared with the Agent Bridge (bridge-internals §9).
 *
 * When the bridge is enabled, every mutation opens the slot's lock file `<lock dir>/NN.lock`
 * O_RDONLY|O_NOFOLLOW — the bridge pre-creates it; this process never creates or modifies lock
 * files — and holds `flock(LOCK_EX|LOCK_NB)` for the mutation:
 * - held by a bridge writer → WORKDIR_BUSY (this check wins over the guard);
 * - then an active-slot guard `<lock dir>/active/NN` → WORKDIR_RECOVERY_REQUIRED;
 * - a missing or unsafe lock file, or a guard that is not a regular file → AGENT_LOCK_UNAVAILABLE.
 * With the bridge disabled there is no lease (mutations serialize in-process only). Reads never
 * take it. flock is never called blocking on the event loop.
 */
export type LeaseError = WorkdirBusy | WorkdirRecoveryRequired | AgentLockUnavailable

export const lockFileName = (slot: number): string => `${slotId(slot)}.lock`
export const guardName = (slot: number): string => `active/${slotId(slot)}`

export class LeaseManager extends Effect.Service<LeaseManager>()("@serverfs/workspace/LeaseManager", {
  effect: Effect.gen(function* () {
    const { global } = yield* Configuration
    const lockDir = global.agentLockDir

    const acquire = (workdir: Workdir): Effect.Effect<number, LeaseError> =>
      Effect.suspend(() => {
        const unavailable = new AgentLockUnavailable({ workdir: workdir.alias })
        let fd: number
        try {
          fd = openat(
            AT.FDCWD,
            `${lockDir}/${lockFileName(workdir.slot)}`,
            O.RDONLY | O.NOFOLLOW | O.NONBLOCK
          )
        } catch {
          return Effect.fail(unavailable)
        }
        try {
          if (!isRegular(fstat(fd))) throw unavailable
          try {
            flock(fd, LOCK.EX | LOCK.NB)
          } catch (error) {
            throw isWouldBlock(error) ? new WorkdirBusy({ workdir: workdir.alias }) : unavailable
          }
          let guard: ReturnType<typeof fstatat> | undefined
          try {
            guard = fstatat(AT.FDCWD, `${lockDir}/${guardName(workdir.slot)}`, AT.SYMLINK_NOFOLLOW)
          } catch (error) {
            if (codeOf(error) !== "ENOENT") throw unavailable
          }
          if (guard !== undefined) {
            throw isRegular(guard) ? new WorkdirRecoveryRequired({ workdir: workdir.alias }) : unavailable
          }
          return Effect.succeed(fd)
        } catch (error) {
          close(fd)
          return Effect.fail(error as LeaseError)
        }
      })

    /** Run `effect` holding the workdir's lease (closing the fd releases the flock). */
    const hold = <A, E, R>(
      workdir: Workdir,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | LeaseError, R> =>
      global.agentBridgeEnabled
        ? Effect.acquireUseRelease(
            acquire(workdir),
            () => effect,
            (fd) => Effect.sync(() => close(fd))
          )
        : effect

    return { hold } as const
  })
}) {}
