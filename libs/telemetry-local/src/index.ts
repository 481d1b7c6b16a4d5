export {
  type AuditFields,
  type AuditLevel,
  AuditLog,
  type AuditLogOptions,
  type AuditValue
} from "./AuditLog.js"
export { AuditSink } from "./AuditSink.js"
export {
  type DiagnosticLimits,
  DiagnosticsBuffer,
  MAX_SEAL_BYTES,
  REMEMBERED_IDS
} from "./diagnostics/DiagnosticsBuffer.js"
export {
  type DurableTask,
  diagnosticsSnapshotOf,
  diagnosticsTaskResultOf
} from "./diagnostics/DiagnosticsProjection.js"
export {
  type DiagnosticStaging,
  DiagnosticsRecorder,
  type DiagnosticsRecorderService,
  type TraceLookup
} from "./diagnostics/DiagnosticsRecorder.js"
export { makeFailOpenRecorder } from "./diagnostics/FailOpenRecorder.js"
export { JsonLoggerLive } from "./JsonLogger.js"
export {
  AgentMetrics,
  leaseAcquireSeconds,
  queueDepth,
  queueWaitSeconds,
  type RpcOutcome,
  recoveryTotal,
  rpcCallsTotal,
  rpcDurationSeconds,
  taskDurationSeconds,
  taskTerminalTotal
} from "./metrics/AgentMetrics.js"
export { metricsSnapshot } from "./metrics/MetricsSnapshot.js"
