import { resultShareBytes, taskShareBytes } from "@serverfs/policy"
import type { EventLimits, EventRefusal } from "@serverfs/store"
import { TaskStore } from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { Effect } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { makeEventWriter } from "./EventWriter.js"

/**
 * A task's event stream as the bridge writes it (bridge-internals §8): batched through the
 * EventWriter, bounded per task by the disk budget's share (issue 14), a refused event logged and
 * dropped (the task goes on).
 *
 * Built before every service that runs tasks: its last flush (a finalizer) then runs after
 * theirs, so a task stopped at shutdown still records its end.
 */
export class TaskEvents extends Effect.Service<TaskEvents>()("@serverfs/bridge/TaskEvents", {
  scoped: Effect.gen(function* () {
    const store = yield* TaskStore
    const settings = yield* BridgeSettingsTag
    const audit = yield* AuditLog

    // Every active task may use one share of the budget: its events up to the share less room
    // for its largest result.
    const taskShare = taskShareBytes(settings)
    const limits: EventLimits = {
      maxEventsPerTask: settings.maxEventsPerTask,
      maxEventBytes: settings.maxEventBytes,
      maxStoredBytesPerTask: taskShare - resultShareBytes(settings)
    }

    /** An event the store refused to keep: logged and dropped, the task goes on. */
    const dropped = (taskId: string, eventType: string, refusal: EventRefusal) =>
      audit.emit("WARNING", "event_dropped", {
        task_id: taskId,
        event_type: eventType,
        error_code: refusal._tag
      })

    const writer = yield* makeEventWriter(store, {
      limits,
      onRefused: (event, refusal) => dropped(event.taskId, event.eventType, refusal),
      onFailure: (count, errorCode) =>
        audit.emit("ERROR", "event_batch_lost", { events: count, error_code: errorCode })
    })

    return {
      limits,
      taskShare,
      dropped,
      /** Append an event and wait for its commit. */
      append: (taskId: string, eventType: string, payload: Record<string, unknown>): Effect.Effect<void> =>
        writer.append({ taskId, eventType, payload }),
      /** Queue an event without waiting (a provider's stream goes on while the writer commits). */
      enqueue: (taskId: string, eventType: string, payload: Record<string, unknown>): Effect.Effect<void> =>
        writer.enqueue({ taskId, eventType, payload }),
      /** Every queued event committed. */
      flush: writer.flush
    } as const
  })
}) {}
