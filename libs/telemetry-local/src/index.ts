export {
  type AuditFields,
  type AuditLevel,
  AuditLog,
  type AuditLogOptions,
  type AuditValue
} from "./AuditLog.js"
export { AuditSink } from "./AuditSink.js"
export { JsonLoggerLive } from "./JsonLogger.js"
