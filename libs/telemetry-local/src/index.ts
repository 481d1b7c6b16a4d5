export * from "./AuditLog.js"
export * from "./AuditSink.js"
export * from "./JsonLogger.js"
