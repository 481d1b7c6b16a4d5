export * from "./agent/AgentErrors.js"
export {
  DEFAULT_EVENTS_PAGE,
  MAX_EVENTS_PAGE,
  MAX_INTERACTION_BYTES,
  MAX_MESSAGE_BYTES,
  MAX_MODEL_BYTES,
  MAX_RESULT_CHUNK_BYTES,
  MAX_TOKEN_BYTES,
  RESULT_PREVIEW_BYTES
} from "./agent/ContractLimits.js"
export * from "./agent/Interactions.js"
export * from "./agent/Manifest.js"
export * from "./agent/Runtime.js"
export * from "./agent/TaskEvent.js"
export * from "./agent/TaskState.js"
export * from "./agent/TaskView.js"
export * from "./errors/BinaryErrors.js"
export * from "./errors/ErrorCode.js"
export type * from "./errors/FilesystemError.js"
export * from "./errors/IngressErrors.js"
export * from "./errors/InvalidArgument.js"
export * from "./errors/LeaseErrors.js"
export * from "./errors/Location.js"
export * from "./errors/MutationErrors.js"
export * from "./errors/PathErrors.js"
export * from "./errors/ReadErrors.js"
export * from "./redaction/HostPathRedaction.js"
export * from "./rpc/Envelope.js"
export * from "./rpc/Methods.js"
export * from "./tools/AgentTools.js"
export * from "./tools/BinaryTools.js"
export * from "./tools/Fields.js"
export * from "./tools/MutationTools.js"
export * from "./tools/ReadTools.js"
export * from "./tools/ServerInfoTools.js"
