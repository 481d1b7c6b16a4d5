export * from "./agent/AgentErrors.js"
export * from "./agent/Interactions.js"
export * from "./agent/Manifest.js"
export * from "./agent/Runtime.js"
export * from "./agent/TaskEvent.js"
export * from "./agent/TaskState.js"
export * from "./agent/TaskView.js"
export * from "./errors/BinaryErrors.js"
export * from "./errors/ErrorCode.js"
export type * from "./errors/FilesystemError.js"
export {
  FROZEN_ERROR_CODES,
  FROZEN_ERRORS,
  type FrozenError,
  FrozenErrorCode,
  FrozenErrorSchema,
  isFrozenError,
  isFrozenErrorCode
} from "./errors/FrozenErrors.js"
export * from "./errors/IngressErrors.js"
export * from "./errors/InvalidArgument.js"
export * from "./errors/LeaseErrors.js"
export * from "./errors/Location.js"
export * from "./errors/MutationErrors.js"
export * from "./errors/PathErrors.js"
export * from "./errors/ReadErrors.js"
export * from "./redaction/HostPathRedaction.js"
export * from "./rpc/Envelope.js"
export {
  PendingRequestId,
  pendingRequestId,
  type RpcRequestId,
  rpcRequestId,
  TaskId,
  taskId
} from "./rpc/Ids.js"
export * from "./rpc/Methods.js"
export { errorFromWire, errorToWire, WireError } from "./rpc/WireError.js"
export * from "./tools/AgentTools.js"
export * from "./tools/BinaryTools.js"
export * from "./tools/Fields.js"
export * from "./tools/MutationTools.js"
export * from "./tools/ReadTools.js"
export * from "./tools/ServerInfoTools.js"
