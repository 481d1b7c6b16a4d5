import type { LeaseStatus, LockPathUnsafe } from "@serverfs/domain"
import type { Workdir } from "@serverfs/policy"
import type { TaskStoreShape } from "@serverfs/store"
import { Effect, Option } from "effect"
import type { BridgeLeases } from "../leases/BridgeLeases.js"
import type { LiveTaskRegistry } from "../tasks/LiveTasks.js"
import { probeLock } from "./LeaseProbe.js"

/**
 * `lease.list` (issue 10): each read-write workdir's writer lease and recovery guard. The lease
 * is `held` when this bridge holds it — by a live task (the registry knows its slot), or by a
 * recovery in progress (no task) — `held_elsewhere` when another process holds the flock (an
 * MCP mutation, another tool), found without taking the flock (LeaseProbe.ts), else `free`.
 */
export interface LeaseListingDeps {
  readonly workdirs: ReadonlyArray<Workdir>
  readonly lockDir: string
  readonly leases: BridgeLeases
  readonly live: LiveTaskRegistry
  readonly store: TaskStoreShape
}

const leaseOf = (deps: LeaseListingDeps, workdir: Workdir) =>
  Effect.gen(function* () {
    const owner = deps.live.all().find((task) => task.leaseSlot === workdir.slot)
    if (owner !== undefined) return { lease: "held" as const, task_id: owner.taskId }
    if (deps.leases.holds(workdir.slot)) return { lease: "held" as const, task_id: null }
    const probed = yield* probeLock(deps.lockDir, workdir.slot)
    return { lease: probed === "locked" ? ("held_elsewhere" as const) : ("free" as const), task_id: null }
  })

const guardOf = (deps: LeaseListingDeps, workdir: Workdir) =>
  Effect.gen(function* () {
    const state = yield* deps.leases.readGuard(workdir.slot)
    if (state._tag === "none") return { guard: "none" as const, guard_task_id: null, guard_task_status: null }
    if (state._tag === "invalid")
      return { guard: "invalid" as const, guard_task_id: null, guard_task_status: null }
    const task = yield* deps.store.getTask(state.guard.task_id)
    return {
      guard: "valid" as const,
      guard_task_id: state.guard.task_id,
      guard_task_status: Option.match(task, { onNone: () => null, onSome: (t) => t.status })
    }
  })

export const listLeases = (
  deps: LeaseListingDeps
): Effect.Effect<{ workdirs: Array<LeaseStatus> }, LockPathUnsafe> =>
  Effect.map(
    Effect.forEach(
      deps.workdirs.filter((workdir) => !workdir.readOnly),
      (workdir) =>
        Effect.map(
          Effect.all([leaseOf(deps, workdir), guardOf(deps, workdir)]),
          ([lease, guard]): LeaseStatus => ({
            slot: workdir.slot,
            workdir_alias: workdir.alias,
            ...lease,
            ...guard
          })
        )
    ),
    (workdirs) => ({ workdirs })
  )
