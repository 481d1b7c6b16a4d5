import { Data, Schema } from "effect"
import { FrozenErrorClass } from "../errors/FrozenErrorClass.js"

/**
 * Errors of the agent plane (bridge-internals §4, spec v0.3 §25, v0.7), one TaggedError per
 * frozen code. They cross the RPC boundary as `{code, message}` and reach MCP clients as
 * `CODE: message` unchanged; `message` never carries a host path, a prompt or a secret. The
 * bridge raises WORKDIR_NOT_FOUND / WORKDIR_BUSY / WORKDIR_RECOVERY_REQUIRED with the
 * filesystem plane's classes.
 *
 * Generated once from the code list below; keep the list, the classes and `AGENT_ERRORS` in step.
 */
const Message = { message: "string" } as const

// ---- RPC envelope (bridge-internals §1.4)
export class InvalidRequest extends FrozenErrorClass("INVALID_REQUEST", Message) {}
export class ProtocolVersionUnsupported extends FrozenErrorClass("PROTOCOL_VERSION_UNSUPPORTED", Message) {}
export class MethodNotFound extends FrozenErrorClass("METHOD_NOT_FOUND", Message) {}
export class BridgeProtocolError extends FrozenErrorClass("BRIDGE_PROTOCOL_ERROR", Message) {}
export class PeerNotAuthorized extends FrozenErrorClass("PEER_NOT_AUTHORIZED", Message) {}
export class RequestTooLarge extends FrozenErrorClass("REQUEST_TOO_LARGE", Message) {}
export class ResponseTooLarge extends FrozenErrorClass("RESPONSE_TOO_LARGE", Message) {}

// ---- submission and authorization
export class BridgeClosed extends FrozenErrorClass("BRIDGE_CLOSED", Message) {}
export class AgentPromptTooLarge extends FrozenErrorClass("AGENT_PROMPT_TOO_LARGE", Message) {}
export class AgentProfileNotAllowed extends FrozenErrorClass("AGENT_PROFILE_NOT_ALLOWED", Message) {}
export class InvalidWorkdirPath extends FrozenErrorClass("INVALID_WORKDIR_PATH", Message) {}
export class WorkdirPathNotFound extends FrozenErrorClass("WORKDIR_PATH_NOT_FOUND", Message) {}
export class AgentDisabled extends FrozenErrorClass("AGENT_DISABLED", Message) {}
export class AgentRuntimeNotAllowed extends FrozenErrorClass("AGENT_RUNTIME_NOT_ALLOWED", Message) {}
export class AgentRuntimeUnavailable extends FrozenErrorClass("AGENT_RUNTIME_UNAVAILABLE", Message) {}
export class AgentRuntimeNotReady extends FrozenErrorClass("AGENT_RUNTIME_NOT_READY", Message) {}
export class AgentSessionNotResumable extends FrozenErrorClass("AGENT_SESSION_NOT_RESUMABLE", Message) {}
export class AgentTaskNotFound extends FrozenErrorClass("AGENT_TASK_NOT_FOUND", Message) {}
export class AgentIdempotencyConflict extends FrozenErrorClass("AGENT_IDEMPOTENCY_CONFLICT", Message) {}
export class AgentTaskExists extends FrozenErrorClass("AGENT_TASK_EXISTS", Message) {}
export class AgentTaskLimitReached extends FrozenErrorClass("AGENT_TASK_LIMIT_REACHED", Message) {}
/** The state's disk budget cannot hold a new task even after evicting finished ones (issue 14). */
export class AgentStorageLimitReached extends FrozenErrorClass("AGENT_STORAGE_LIMIT_REACHED", Message) {}
export class LockPathUnsafe extends FrozenErrorClass("LOCK_PATH_UNSAFE", Message) {}
export class BridgeSchedulingFailed extends FrozenErrorClass("BRIDGE_SCHEDULING_FAILED", Message) {}

// ---- interactions
export class RequestNotFound extends FrozenErrorClass("REQUEST_NOT_FOUND", Message) {}
export class RequestAlreadyResolved extends FrozenErrorClass("REQUEST_ALREADY_RESOLVED", Message) {}
export class RequestStale extends FrozenErrorClass("REQUEST_STALE", Message) {}
export class InvalidApprovalDecision extends FrozenErrorClass("INVALID_APPROVAL_DECISION", Message) {}
export class PermissionOutsidePolicy extends FrozenErrorClass("PERMISSION_OUTSIDE_POLICY", Message) {}
export class InvalidQuestionAnswer extends FrozenErrorClass("INVALID_QUESTION_ANSWER", Message) {}
export class AgentInteractionTooLarge extends FrozenErrorClass("AGENT_INTERACTION_TOO_LARGE", Message) {}
export class RequestPending extends FrozenErrorClass("REQUEST_PENDING", Message) {}
export class RequestExists extends FrozenErrorClass("REQUEST_EXISTS", Message) {}

// ---- steering messages
export class AgentMessageTooLarge extends FrozenErrorClass("AGENT_MESSAGE_TOO_LARGE", Message) {}
export class AgentTaskTerminal extends FrozenErrorClass("AGENT_TASK_TERMINAL", Message) {}
export class AgentTaskNotActive extends FrozenErrorClass("AGENT_TASK_NOT_ACTIVE", Message) {}
export class AgentProviderError extends FrozenErrorClass("AGENT_PROVIDER_ERROR", Message) {}

// ---- results
export class AgentResultNotRetrievable extends FrozenErrorClass("AGENT_RESULT_NOT_RETRIEVABLE", Message) {}
export class InvalidResultLimit extends FrozenErrorClass("INVALID_RESULT_LIMIT", Message) {}
export class InvalidResultOffset extends FrozenErrorClass("INVALID_RESULT_OFFSET", Message) {}
export class AgentResultStorageError extends FrozenErrorClass("AGENT_RESULT_STORAGE_ERROR", Message) {}
export class AgentResultTooLarge extends FrozenErrorClass("AGENT_RESULT_TOO_LARGE", Message) {}

// ---- events
export class InvalidLimit extends FrozenErrorClass("INVALID_LIMIT", Message) {}
export class AgentEventTooLarge extends FrozenErrorClass("AGENT_EVENT_TOO_LARGE", Message) {}
export class AgentEventLimitReached extends FrozenErrorClass("AGENT_EVENT_LIMIT_REACHED", Message) {}

// ---- stored on tasks
export class AgentTaskTimedOut extends FrozenErrorClass("AGENT_TASK_TIMED_OUT", Message) {}
export class AgentInteractionTimedOut extends FrozenErrorClass("AGENT_INTERACTION_TIMED_OUT", Message) {}
export class AgentInteractionExpired extends FrozenErrorClass("AGENT_INTERACTION_EXPIRED", Message) {}
export class BridgeShutdown extends FrozenErrorClass("BRIDGE_SHUTDOWN", Message) {}
export class BridgeRestarted extends FrozenErrorClass("BRIDGE_RESTARTED", Message) {}
export class AgentProviderInactive extends FrozenErrorClass("AGENT_PROVIDER_INACTIVE", Message) {}
export class AgentProviderDisconnected extends FrozenErrorClass("AGENT_PROVIDER_DISCONNECTED", Message) {}

// ---- task state
export class InvalidTaskTransition extends FrozenErrorClass("INVALID_TASK_TRANSITION", Message) {}

// ---- bridge startup
export class SocketPathInUse extends FrozenErrorClass("SOCKET_PATH_IN_USE", Message) {}
export class SocketDirectoryUnsafe extends FrozenErrorClass("SOCKET_DIRECTORY_UNSAFE", Message) {}
export class StateDirectoryUnsafe extends FrozenErrorClass("STATE_DIRECTORY_UNSAFE", Message) {}

// ---- MCP side of the RPC (tool-contracts §8)
export class AgentBridgeUnavailable extends FrozenErrorClass("AGENT_BRIDGE_UNAVAILABLE", Message) {}
export class AgentBridgeProtocolError extends FrozenErrorClass("AGENT_BRIDGE_PROTOCOL_ERROR", Message) {}
export class AgentBridgeError extends FrozenErrorClass("AGENT_BRIDGE_ERROR", Message) {}

/** Every agent-plane error class, by code. */
export const AGENT_ERRORS = {
  INVALID_REQUEST: InvalidRequest,
  PROTOCOL_VERSION_UNSUPPORTED: ProtocolVersionUnsupported,
  METHOD_NOT_FOUND: MethodNotFound,
  BRIDGE_PROTOCOL_ERROR: BridgeProtocolError,
  PEER_NOT_AUTHORIZED: PeerNotAuthorized,
  REQUEST_TOO_LARGE: RequestTooLarge,
  RESPONSE_TOO_LARGE: ResponseTooLarge,
  BRIDGE_CLOSED: BridgeClosed,
  AGENT_PROMPT_TOO_LARGE: AgentPromptTooLarge,
  AGENT_PROFILE_NOT_ALLOWED: AgentProfileNotAllowed,
  INVALID_WORKDIR_PATH: InvalidWorkdirPath,
  WORKDIR_PATH_NOT_FOUND: WorkdirPathNotFound,
  AGENT_DISABLED: AgentDisabled,
  AGENT_RUNTIME_NOT_ALLOWED: AgentRuntimeNotAllowed,
  AGENT_RUNTIME_UNAVAILABLE: AgentRuntimeUnavailable,
  AGENT_RUNTIME_NOT_READY: AgentRuntimeNotReady,
  AGENT_SESSION_NOT_RESUMABLE: AgentSessionNotResumable,
  AGENT_TASK_NOT_FOUND: AgentTaskNotFound,
  AGENT_IDEMPOTENCY_CONFLICT: AgentIdempotencyConflict,
  AGENT_TASK_EXISTS: AgentTaskExists,
  AGENT_TASK_LIMIT_REACHED: AgentTaskLimitReached,
  AGENT_STORAGE_LIMIT_REACHED: AgentStorageLimitReached,
  LOCK_PATH_UNSAFE: LockPathUnsafe,
  BRIDGE_SCHEDULING_FAILED: BridgeSchedulingFailed,
  REQUEST_NOT_FOUND: RequestNotFound,
  REQUEST_ALREADY_RESOLVED: RequestAlreadyResolved,
  REQUEST_STALE: RequestStale,
  INVALID_APPROVAL_DECISION: InvalidApprovalDecision,
  PERMISSION_OUTSIDE_POLICY: PermissionOutsidePolicy,
  INVALID_QUESTION_ANSWER: InvalidQuestionAnswer,
  AGENT_INTERACTION_TOO_LARGE: AgentInteractionTooLarge,
  REQUEST_PENDING: RequestPending,
  REQUEST_EXISTS: RequestExists,
  AGENT_MESSAGE_TOO_LARGE: AgentMessageTooLarge,
  AGENT_TASK_TERMINAL: AgentTaskTerminal,
  AGENT_TASK_NOT_ACTIVE: AgentTaskNotActive,
  AGENT_PROVIDER_ERROR: AgentProviderError,
  AGENT_RESULT_NOT_RETRIEVABLE: AgentResultNotRetrievable,
  INVALID_RESULT_LIMIT: InvalidResultLimit,
  INVALID_RESULT_OFFSET: InvalidResultOffset,
  AGENT_RESULT_STORAGE_ERROR: AgentResultStorageError,
  AGENT_RESULT_TOO_LARGE: AgentResultTooLarge,
  INVALID_LIMIT: InvalidLimit,
  AGENT_EVENT_TOO_LARGE: AgentEventTooLarge,
  AGENT_EVENT_LIMIT_REACHED: AgentEventLimitReached,
  AGENT_TASK_TIMED_OUT: AgentTaskTimedOut,
  AGENT_INTERACTION_TIMED_OUT: AgentInteractionTimedOut,
  AGENT_INTERACTION_EXPIRED: AgentInteractionExpired,
  BRIDGE_SHUTDOWN: BridgeShutdown,
  BRIDGE_RESTARTED: BridgeRestarted,
  AGENT_PROVIDER_INACTIVE: AgentProviderInactive,
  AGENT_PROVIDER_DISCONNECTED: AgentProviderDisconnected,
  INVALID_TASK_TRANSITION: InvalidTaskTransition,
  SOCKET_PATH_IN_USE: SocketPathInUse,
  SOCKET_DIRECTORY_UNSAFE: SocketDirectoryUnsafe,
  STATE_DIRECTORY_UNSAFE: StateDirectoryUnsafe,
  AGENT_BRIDGE_UNAVAILABLE: AgentBridgeUnavailable,
  AGENT_BRIDGE_PROTOCOL_ERROR: AgentBridgeProtocolError,
  AGENT_BRIDGE_ERROR: AgentBridgeError
} as const

export type AgentErrorCode = keyof typeof AGENT_ERRORS
/** Every agent-plane code, in the order above. */
export const AGENT_ERROR_CODES = Object.keys(AGENT_ERRORS) as ReadonlyArray<AgentErrorCode>
export const AgentErrorCode = Schema.Literal(
  ...(AGENT_ERROR_CODES as [AgentErrorCode, ...Array<AgentErrorCode>])
)
export type AgentError = InstanceType<(typeof AGENT_ERRORS)[AgentErrorCode]>

/** Build the error of a code with its message. */
export const agentError = (code: AgentErrorCode, message: string): AgentError =>
  new AGENT_ERRORS[code]({ message })

/**
 * A bridge error the client cannot give its class: a newer bridge's code, a code outside the
 * called method's contract, or a message that does not read back into its class's fields (the
 * registered classes, filesystem codes the bridge shares included, are rebuilt by libs/rpc's
 * ResponseDecoder). It keeps the code and message exactly as the bridge sent them: clients
 * render `CODE: message` verbatim (tool-contracts §8).
 */
export class RelayedBridgeError extends Data.Error<{ readonly code: string; readonly message: string }> {
  get _tag(): string {
    return this.code
  }
}

/** What a bridge call can fail with on the client side. */
export type BridgeCallError = AgentError | RelayedBridgeError
