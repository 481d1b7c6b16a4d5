import { AgentTaskTimedOut, BridgeRestarted, isTerminal } from "@serverfs/domain"
import { TaskStore } from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { Clock, DateTime, Effect, Option } from "effect"
import { TaskObservations } from "../diagnostics/TaskObservations.js"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { Reattachment } from "./Reattachment.js"
import { RecoveryGuards, recordedTurn } from "./RecoveryGuards.js"
import { Retention } from "./Retention.js"
import { TaskEvents } from "./TaskEvents.js"
import { Terminations } from "./Terminations.js"

/**
 * Restart reconciliation (bridge-internals §10). At startup, every non-terminal task was left by
 * a previous process. Where its adapter proves the exact turn still live and everything the task
 * held comes back (Reattachment), it goes on: the adapter's reconcile then says REATTACHED.
 * Otherwise it is interrupted — never re-run, never answered — with BRIDGE_RESTARTED
 * (AGENT_TASK_TIMED_OUT past its deadline). A task's recovery guard is removed only when its adapter proves
 * the old run stopped; guards of tasks already terminal (a crash between the two) are reconciled
 * the same way.
 */
export class Recovery extends Effect.Service<Recovery>()("@serverfs/bridge/Recovery", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const registry = yield* RuntimeRegistry
    const leases = yield* BridgeLeases
    const audit = yield* AuditLog
    const events = yield* TaskEvents
    const terminations = yield* Terminations
    const guards = yield* RecoveryGuards
    const retention = yield* Retention
    const observations = yield* TaskObservations
    const reattachment = yield* Reattachment

    const reconcileAtStartup: Effect.Effect<void> = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const task of yield* store.listNonTerminal()) {
        // Spec v0.22 §9.4: this generation observes the task again — a `restarted` slot, never
        // a reconstruction of what the previous process saw.
        const recovering = yield* observations.recoveryStarted(task)
        yield* events.append(task.task_id, "runtime.reconcile_started", { runtime: task.runtime })
        const message = "the bridge restarted during the task; it was not re-run"
        const cause =
          now > DateTime.toEpochMillis(DateTime.unsafeMake(task.deadline_at))
            ? new AgentTaskTimedOut({ message })
            : new BridgeRestarted({ message })
        // A live turn the adapter proves and re-attaches goes on (Reattachment); past the
        // deadline nothing is attempted.
        const reattached = cause instanceof BridgeRestarted ? yield* reattachment.attempt(task, cause) : false
        const adapter = registry.get(task.runtime)
        const result =
          adapter === undefined
            ? { status: "UNKNOWN", providerActive: null, detail: "the runtime is not configured" }
            : yield* adapter.reconcile(recordedTurn(task))
        yield* events.append(task.task_id, "runtime.reconcile_finished", {
          runtime: task.runtime,
          status: result.status,
          provider_active: result.providerActive
        })
        if (reattached) {
          yield* observations.recovered(task.task_id, recovering, "reattached")
          yield* events.append(task.task_id, "task.reconciled", {
            status: result.status,
            provider_active: result.providerActive,
            reattached: true
          })
          yield* audit.emit("INFO", "task_reconciled", {
            task_id: task.task_id,
            status: result.status,
            provider_active: result.providerActive,
            reattached: true
          })
          continue
        }
        // One outcome, for the metric and the `agent.recovery` operation; the terminal move then seals.
        yield* observations.recovered(
          task.task_id,
          recovering,
          cause instanceof AgentTaskTimedOut ? "timed_out" : "interrupted"
        )
        yield* terminations.terminate(task.task_id, cause)
        yield* events.append(task.task_id, "task.reconciled", {
          status: result.status,
          provider_active: result.providerActive,
          error_code: cause._tag
        })
        yield* audit.emit("INFO", "task_reconciled", {
          task_id: task.task_id,
          status: result.status,
          provider_active: result.providerActive,
          error_code: cause._tag
        })
        if (result.providerActive === false && task.profile === "workspace-write") {
          // A guard kept here is seen (and counted) by the pass over the slots below.
          if (yield* guards.clearGuardOf(task.workdir_slot, task.task_id))
            yield* observations.guardDecision(true)
        }
      }
      for (const { slot, guard } of yield* leases.validGuards()) {
        const task = yield* store.getTask(guard.task_id)
        const adapter = registry.get(guard.runtime)
        if (Option.isSome(task) && !isTerminal(task.value.status)) continue
        if (Option.isNone(task) || adapter === undefined) {
          yield* observations.guardDecision(false) // nothing can prove its run stopped: it stays
          continue
        }
        const result = yield* adapter.reconcile(recordedTurn(task.value))
        if (result.providerActive === false) yield* leases.removeGuard(slot)
        yield* observations.guardDecision(result.providerActive === false)
      }
      // After reconciliation: the dead process's tasks are finished now, and counting them as
      // active (at their full share) would evict finished tasks for room nobody will use.
      yield* retention.collectGarbage
    })

    return { reconcileAtStartup } as const
  })
}) {}
