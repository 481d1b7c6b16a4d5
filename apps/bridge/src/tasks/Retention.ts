import { type StorageUsage, TaskStore } from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { Clock, DateTime, Effect } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { TaskEvents } from "./TaskEvents.js"

/**
 * Retention and the disk budget (spec v0.3 §23, issue 14): finished tasks older than the
 * retention are collected; while the state plus what the active tasks may still write is over
 * the budget, finished tasks are evicted oldest first. Tasks a recovery guard points at are kept
 * whatever their age or the budget.
 */
export class Retention extends Effect.Service<Retention>()("@serverfs/bridge/Retention", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const leases = yield* BridgeLeases
    const settings = yield* BridgeSettingsTag
    const audit = yield* AuditLog
    const { taskShare } = yield* TaskEvents

    const guardedTaskIds = Effect.map(leases.validGuards(), (guards) =>
      guards.map(({ guard }) => guard.task_id)
    )

    /**
     * Keep the state within its budget with room for `newTasks` more active tasks: usage, plus
     * what the active tasks may still write up to their shares, plus a share per new task.
     * Returns whether it now fits.
     */
    const fitBudget = (newTasks: number, usage: StorageUsage): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        // Never more shares than the task cap allows: a submit over the cap is refused by the
        // insert (AGENT_TASK_LIMIT_REACHED) and must not evict anything first.
        const shares = Math.min(usage.activeTasks + newTasks, settings.maxActiveTasks)
        const reserve = Math.max(0, shares * taskShare - usage.activeBytes)
        if (usage.totalBytes + reserve <= settings.stateMaxBytes) return true
        const outcome = yield* store.evictForBudget({
          budgetBytes: settings.stateMaxBytes,
          reserveBytes: reserve,
          protectedTaskIds: yield* guardedTaskIds
        })
        if (outcome.evicted.length > 0)
          yield* audit.emit("INFO", "tasks_evicted", {
            reason: "state_budget",
            count: outcome.evicted.length,
            usage_bytes: outcome.usageBytes
          })
        return outcome.usageBytes + reserve <= settings.stateMaxBytes
      })

    /** The budget with room for `newTasks`, on the usage read now: one read of the totals row when it fits. */
    const enforceBudget = (newTasks: number): Effect.Effect<boolean> =>
      Effect.flatMap(store.storageUsage(), (usage) => fitBudget(newTasks, usage))

    const bestEffort = <A>(effect: Effect.Effect<A>) =>
      effect.pipe(
        Effect.asVoid,
        // Collection is best effort: a defect here is logged, never fails the submit or turn that ran it.
        Effect.catchAllDefect((defect) => Effect.logError("garbage collection failed", defect))
      )

    /**
     * The finished tasks past the retention, collected when there are any. Returns the check:
     * whether some had expired, and the usage it read before collecting. Most calls find nothing
     * old enough: one statement, and the guards are not even read.
     */
    const collectExpiredNow = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const cutoff = DateTime.formatIso(DateTime.unsafeMake(now - settings.retentionSeconds * 1000))
      const check = yield* store.retentionCheck(cutoff)
      // A failed collection is logged; the budget is still enforced after it.
      if (check.expired)
        yield* bestEffort(
          Effect.flatMap(guardedTaskIds, (protectedTaskIds) =>
            store.gc({ retentionSeconds: settings.retentionSeconds, protectedTaskIds })
          )
        )
      return check
    })

    /** Finished tasks past the retention, collected (a submit's second step, bridge-internals §3). */
    const collectExpired: Effect.Effect<void> = bestEffort(collectExpiredNow)

    /**
     * After each task and after a restart's recovery: the expired tasks, then the budget with no
     * new task — on the usage the retention check read, when it removed nothing (issue 12: one
     * statement fewer per task).
     */
    const collectGarbage: Effect.Effect<void> = bestEffort(
      Effect.flatMap(collectExpiredNow, (check) =>
        check.expired ? enforceBudget(0) : fitBudget(0, check.usage)
      )
    )

    return { enforceBudget, collectExpired, collectGarbage } as const
  })
}) {}
