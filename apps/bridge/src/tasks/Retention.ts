import { TaskStore } from "@serverfs/store"
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
     * Returns whether it now fits. One aggregate query when it already fits.
     */
    const enforceBudget = (newTasks: number): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const usage = yield* store.storageUsage()
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

    const bestEffort = <A>(effect: Effect.Effect<A>) =>
      effect.pipe(
        Effect.asVoid,
        // Collection is best effort: a defect here is logged, never fails the submit or turn that ran it.
        Effect.catchAllDefect((defect) => Effect.logError("garbage collection failed", defect))
      )

    /** Finished tasks past the retention, collected. */
    const collectExpired: Effect.Effect<void> = bestEffort(
      Effect.gen(function* () {
        // Most calls find nothing old enough: one indexed read, and the guards are not even read.
        const now = yield* Clock.currentTimeMillis
        const cutoff = DateTime.formatIso(DateTime.unsafeMake(now - settings.retentionSeconds * 1000))
        if ((yield* store.listTerminalTaskIdsOlderThan(cutoff)).length > 0)
          yield* store.gc({
            retentionSeconds: settings.retentionSeconds,
            protectedTaskIds: yield* guardedTaskIds
          })
      })
    )

    const collectGarbage: Effect.Effect<void> = Effect.zipRight(collectExpired, bestEffort(enforceBudget(0)))

    return { enforceBudget, collectExpired, collectGarbage } as const
  })
}) {}
