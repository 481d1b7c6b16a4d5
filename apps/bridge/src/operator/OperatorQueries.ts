import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { TaskStore } from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { Effect } from "effect"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { LiveTaskRegistry } from "../tasks/LiveTasks.js"
import { RecoveryGuards } from "../tasks/RecoveryGuards.js"
import { Terminations } from "../tasks/Terminations.js"
import { recoverGuard } from "./GuardRecovery.js"
import { listLeases } from "./LeaseListing.js"
import { listTasks, type TaskListArguments } from "./TaskListing.js"

/**
 * What the operator CLI asks of the bridge beyond the task methods (issue 10): the task listing,
 * each workdir's lease and guard, and guard reconciliation — one file each, this the facade.
 */
export class OperatorQueries extends Effect.Service<OperatorQueries>()("@serverfs/bridge/OperatorQueries", {
  effect: Effect.gen(function* () {
    const { global } = yield* Configuration
    const { all: workdirs } = yield* WorkdirRegistry
    const store = yield* TaskStore
    const leases = yield* BridgeLeases
    const live = yield* LiveTaskRegistry
    const guards = yield* RecoveryGuards
    const terminations = yield* Terminations
    const audit = yield* AuditLog
    const lockDir = global.agentLockDir

    return {
      listTasks: (args: TaskListArguments) => listTasks(store, args),
      listLeases: () => listLeases({ workdirs, lockDir, leases, live, store }),
      recoverGuard: (slot: number, force: boolean) =>
        recoverGuard({ workdirs, leases, guards, store, terminations, audit }, slot, force)
    } as const
  })
}) {}
