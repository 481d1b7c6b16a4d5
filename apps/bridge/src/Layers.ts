import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { TaskStore } from "@serverfs/store"
import { AuditLog, DiagnosticsRecorder, JsonLoggerLive } from "@serverfs/telemetry-local"
import { WorkdirRoots } from "@serverfs/workspace"
import { Effect, Layer } from "effect"
import { BridgeSettingsTag } from "./BridgeSettingsTag.js"
import { BridgeDiagnostics } from "./diagnostics/BridgeDiagnostics.js"
import { TaskObservations } from "./diagnostics/TaskObservations.js"
import { InstanceLockLive } from "./InstanceLock.js"
import { BridgeLeases } from "./leases/BridgeLeases.js"
import { OperatorQueries } from "./operator/OperatorQueries.js"
import { RuntimeRegistry } from "./RuntimeRegistry.js"
import { InteractionBroker } from "./tasks/InteractionBroker.js"
import { LiveTaskRegistry } from "./tasks/LiveTasks.js"
import { ModelCatalogs } from "./tasks/ModelCatalogs.js"
import { Reattachment } from "./tasks/Reattachment.js"
import { Recovery } from "./tasks/Recovery.js"
import { RecoveryGuards } from "./tasks/RecoveryGuards.js"
import { ResultPublisher } from "./tasks/ResultPublisher.js"
import { Retention } from "./tasks/Retention.js"
import { RuntimeModels } from "./tasks/RuntimeModels.js"
import { Submission } from "./tasks/Submission.js"
import { TaskControl } from "./tasks/TaskControl.js"
import { TaskEvents } from "./tasks/TaskEvents.js"
import { TaskQueries } from "./tasks/TaskQueries.js"
import { TaskService } from "./tasks/TaskService.js"
import { TaskStatusFeed } from "./tasks/TaskStatusFeed.js"
import { Terminations } from "./tasks/Terminations.js"
import { TurnRunner } from "./tasks/TurnRunner.js"

/**
 * The task plane: each service above those it uses. Built bottom-up, released top-down — so at
 * shutdown TaskControl interrupts the live tasks first, the registry's fibers are torn down
 * next, and the event writer's last flush runs after both: a stopped task still records its end.
 * Its leaves (store, runtimes, leases, configuration, audit) are provided by the composition.
 */
const TaskPlaneServices = TaskService.Default.pipe(
  Layer.provideMerge(OperatorQueries.Default),
  Layer.provideMerge(Submission.Default),
  Layer.provideMerge(RuntimeModels.Default),
  Layer.provideMerge(ModelCatalogs.Default),
  Layer.provideMerge(Recovery.Default),
  Layer.provideMerge(Reattachment.Default),
  Layer.provideMerge(TurnRunner.Default),
  Layer.provideMerge(TaskControl.Default),
  Layer.provideMerge(ResultPublisher.Default),
  Layer.provideMerge(InteractionBroker.Default),
  Layer.provideMerge(TaskQueries.Default),
  Layer.provideMerge(RecoveryGuards.Default),
  Layer.provideMerge(Retention.Default),
  Layer.provideMerge(Terminations.Default),
  Layer.provideMerge(LiveTaskRegistry.Default),
  // Below the registry: a turn torn down with it still publishes its end.
  Layer.provideMerge(TaskStatusFeed.Default),
  Layer.provideMerge(TaskEvents.Default)
)

/**
 * The task plane over a diagnostics recorder (spec v0.22: memory-only, one generation per layer
 * build) and the observations every seam feeds it from. Tests pass another recorder (a faulty
 * one, for fault injection); the bridge runs `TaskPlaneLayer`.
 */
export const taskPlaneWith = (recorder: Layer.Layer<DiagnosticsRecorder>) =>
  TaskPlaneServices.pipe(
    Layer.provideMerge(BridgeDiagnostics.Default),
    Layer.provideMerge(TaskObservations.Default),
    Layer.provideMerge(recorder)
  )

export const TaskPlaneLayer = taskPlaneWith(DiagnosticsRecorder.layer)

/** The store on the configured state directory. */
export const StoreFromSettings = Layer.unwrapEffect(
  Effect.map(BridgeSettingsTag, (settings) => TaskStore.layer({ stateDir: settings.stateDir }))
)

/**
 * The bridge's service graph. Like the MCP server's, it needs an AuditSink and reads
 * configuration through the ambient ConfigProvider (the same variables and .env file).
 */
const AuditLogFromConfiguration = Layer.unwrapEffect(
  Effect.map(Configuration, ({ global }) =>
    Layer.effectDiscard(AuditLog.setLevel(global.logLevel)).pipe(Layer.provideMerge(AuditLog.Default))
  )
)

export const BridgeLayer = TaskPlaneLayer.pipe(
  Layer.provideMerge(RuntimeRegistry.Default),
  Layer.provideMerge(BridgeLeases.Default),
  Layer.provideMerge(StoreFromSettings),
  // Built before the store and the leases: nothing reads or writes state without the lock.
  Layer.provideMerge(InstanceLockLive),
  Layer.provideMerge(WorkdirRoots.Default),
  Layer.provideMerge(WorkdirRegistry.Default),
  Layer.provideMerge(AuditLogFromConfiguration),
  Layer.provideMerge(BridgeSettingsTag.layer),
  Layer.provideMerge(Configuration.Default),
  Layer.provideMerge(JsonLoggerLive)
)
