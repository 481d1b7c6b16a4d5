export { BridgeSettingsTag } from "./BridgeSettingsTag.js"
export { BridgeDiagnostics } from "./diagnostics/BridgeDiagnostics.js"
export { MetricProjection, type MetricProjectionService } from "./diagnostics/MetricProjection.js"
export { TaskObservations } from "./diagnostics/TaskObservations.js"
export {
  BridgeLayer,
  StoreFromSettings,
  TaskPlaneLayer,
  taskPlaneWith
} from "./Layers.js"
export {
  BridgeLeases,
  type GuardState,
  type HeldLease
} from "./leases/BridgeLeases.js"
export { RecoveryGuard } from "./leases/RecoveryGuard.js"
export {
  bridgeHandlers,
  rpcHandlers
} from "./RpcHandlers.js"
export { RuntimeRegistry } from "./RuntimeRegistry.js"
export { LiveTaskRegistry } from "./tasks/LiveTasks.js"
export {
  checkCorrelationId,
  checkIdempotencyKey,
  checkModel,
  requestFingerprint
} from "./tasks/SubmitChecks.js"
export { TaskService } from "./tasks/TaskService.js"
export { type StatusChange, TaskStatusFeed } from "./tasks/TaskStatusFeed.js"
export {
  pendingRequestView,
  taskView
} from "./tasks/TaskViews.js"
