import { Schema } from "effect"
import {
  AgentDisabled,
  AgentIdempotencyConflict,
  AgentInteractionTooLarge,
  AgentMessageTooLarge,
  AgentProfileNotAllowed,
  AgentPromptTooLarge,
  AgentProviderDisconnected,
  AgentProviderError,
  AgentResultNotRetrievable,
  AgentResultStorageError,
  AgentRuntimeNotAllowed,
  AgentRuntimeUnavailable,
  AgentSessionNotResumable,
  AgentStorageLimitReached,
  AgentTaskExists,
  AgentTaskLimitReached,
  AgentTaskNotActive,
  AgentTaskNotFound,
  AgentTaskTerminal,
  InvalidApprovalDecision,
  InvalidLimit,
  InvalidQuestionAnswer,
  InvalidRequest,
  InvalidResultLimit,
  InvalidResultOffset,
  InvalidTaskTransition,
  InvalidWorkdirPath,
  LockPathUnsafe,
  PermissionOutsidePolicy,
  RequestAlreadyResolved,
  RequestNotFound,
  RequestStale,
  WorkdirPathNotFound
} from "../agent/AgentErrors.js"
import { Answer } from "../agent/Interactions.js"
import { RuntimeModelsResult } from "../agent/Models.js"
import { RuntimeInfo } from "../agent/Runtime.js"
import { TaskEvent } from "../agent/TaskEvent.js"
import { TaskStatus } from "../agent/TaskState.js"
import { TaskView } from "../agent/TaskView.js"
import { WorkdirBusy, WorkdirRecoveryRequired } from "../errors/LeaseErrors.js"
import { WorkdirNotFound } from "../errors/PathErrors.js"
import { type ErrorOf, type ErrorSet, errorSet, NoErrors } from "./ErrorSet.js"
import { PendingRequestId, TaskId } from "./Ids.js"
import { OPERATOR_METHODS } from "./OperatorMethods.js"

/**
 * The bridge methods (bridge-internals §2) as Effect Schemas shared by the server and both
 * clients: per method its params, its result and the frozen errors it may fail with (docs/rpc.md
 * "Error codes" by method). Params are decoded strictly: unknown keys and wrong types are
 * INVALID_REQUEST, and a boolean is never an integer. Values the bridge itself must judge (a
 * decision, a profile) are plain strings here so the bridge can answer with its own code. Task
 * and interaction ids in params decode to branded strings.
 */
const Int = Schema.Number.pipe(Schema.int())
const OptionalText = Schema.optional(Schema.NullOr(Schema.String))

export const RuntimeListParams = Schema.Struct({})
export const RuntimeListResult = Schema.Struct({ runtimes: Schema.Array(RuntimeInfo) })

/** v0.9 (bridge-internals §8): discovery with just `runtime`; advice mode with workdir + task_prompt. */
export const RuntimeModelsParams = Schema.Struct({
  runtime: Schema.String,
  workdir: OptionalText,
  task_prompt: OptionalText,
  path: Schema.optional(Schema.String),
  profile: Schema.optional(Schema.String)
})
export type RuntimeModelsParams = typeof RuntimeModelsParams.Type

export const SubmitParams = Schema.Struct({
  runtime: Schema.String,
  workdir: Schema.String,
  path: Schema.String,
  profile: Schema.String,
  prompt: Schema.String,
  model: OptionalText,
  continue_from_task_id: OptionalText,
  correlation_id: OptionalText,
  idempotency_key: OptionalText
})
export type SubmitParams = typeof SubmitParams.Type
export const SubmitResult = Schema.Struct({
  task_id: Schema.String,
  status: TaskStatus,
  correlation_id: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String)
})
export type SubmitResult = typeof SubmitResult.Type

export const TaskIdParams = Schema.Struct({ task_id: TaskId })

export const EventsParams = Schema.Struct({
  task_id: TaskId,
  after_event_id: Schema.optional(Int),
  limit: Schema.optional(Int)
})
export const EventsResult = Schema.Struct({
  correlation_id: Schema.NullOr(Schema.String),
  events: Schema.Array(TaskEvent),
  next_after_event_id: Schema.Number
})
export type EventsResult = typeof EventsResult.Type

export const ResultReadParams = Schema.Struct({
  task_id: TaskId,
  offset_bytes: Schema.optional(Int),
  max_bytes: Schema.optional(Int)
})
export const ResultReadResult = Schema.Struct({
  text: Schema.String,
  offset_bytes: Schema.Number,
  next_offset_bytes: Schema.Number,
  eof: Schema.Boolean,
  correlation_id: Schema.NullOr(Schema.String)
})
export type ResultReadResult = typeof ResultReadResult.Type

export const ApprovalParams = Schema.Struct({
  task_id: TaskId,
  request_id: PendingRequestId,
  decision: Schema.String,
  granted_permission_ids: Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
})
export const QuestionParams = Schema.Struct({
  task_id: TaskId,
  request_id: PendingRequestId,
  answers: Schema.Array(Answer)
})
export const ResolvedResult = Schema.Struct({
  task_id: Schema.String,
  request_id: Schema.String,
  resolved: Schema.Literal(true),
  correlation_id: Schema.NullOr(Schema.String)
})
export type ResolvedResult = typeof ResolvedResult.Type

export const MessageParams = Schema.Struct({ task_id: TaskId, message: Schema.String })
export const MessageResult = Schema.Struct({
  task_id: Schema.String,
  accepted: Schema.Literal(true),
  correlation_id: Schema.NullOr(Schema.String)
})
export type MessageResult = typeof MessageResult.Type

export const CancelResult = Schema.Struct({
  task_id: Schema.String,
  status: TaskStatus,
  correlation_id: Schema.NullOr(Schema.String)
})
export type CancelResult = typeof CancelResult.Type

// ---- what each method may fail with (docs/rpc.md, "Error codes" by method)
const TaskNotFound = errorSet(AgentTaskNotFound)
const InteractionErrors = [
  AgentTaskNotFound,
  RequestNotFound,
  RequestAlreadyResolved,
  RequestStale,
  AgentInteractionTooLarge,
  InvalidTaskTransition
] as const

export const SubmitErrors = errorSet(
  InvalidRequest,
  AgentPromptTooLarge,
  AgentProfileNotAllowed,
  AgentIdempotencyConflict,
  WorkdirNotFound,
  AgentDisabled,
  AgentRuntimeNotAllowed,
  InvalidWorkdirPath,
  WorkdirPathNotFound,
  AgentTaskNotFound,
  AgentSessionNotResumable,
  AgentRuntimeUnavailable,
  WorkdirRecoveryRequired,
  WorkdirBusy,
  LockPathUnsafe,
  AgentStorageLimitReached,
  AgentTaskLimitReached,
  AgentTaskExists
)
/** Discovery alone fails only for an unknown runtime; advice mode adds submit's authorization. */
export const RuntimeModelsErrors = errorSet(
  InvalidRequest,
  AgentRuntimeUnavailable,
  AgentPromptTooLarge,
  AgentProfileNotAllowed,
  WorkdirNotFound,
  AgentDisabled,
  AgentRuntimeNotAllowed,
  InvalidWorkdirPath,
  WorkdirPathNotFound
)
export const EventsErrors = errorSet(AgentTaskNotFound, InvalidLimit)
export const ResultReadErrors = errorSet(
  AgentTaskNotFound,
  AgentResultNotRetrievable,
  InvalidResultOffset,
  InvalidResultLimit,
  AgentResultStorageError
)
export const ApprovalErrors = errorSet(...InteractionErrors, InvalidApprovalDecision, PermissionOutsidePolicy)
export const QuestionErrors = errorSet(...InteractionErrors, InvalidQuestionAnswer)
/** Steering reaches the runtime, which answers with its own code (tool-contracts §8). */
export const MessageErrors = errorSet(
  AgentMessageTooLarge,
  AgentTaskNotFound,
  AgentTaskTerminal,
  AgentTaskNotActive,
  AgentProviderError,
  AgentProviderDisconnected
)

/** Method name → its params and result schemas and its error set. */
export const BRIDGE_METHODS = {
  "runtime.list": { params: RuntimeListParams, result: RuntimeListResult, errors: NoErrors },
  "runtime.models": { params: RuntimeModelsParams, result: RuntimeModelsResult, errors: RuntimeModelsErrors },
  "task.submit": { params: SubmitParams, result: SubmitResult, errors: SubmitErrors },
  "task.get": { params: TaskIdParams, result: TaskView, errors: TaskNotFound },
  "task.events": { params: EventsParams, result: EventsResult, errors: EventsErrors },
  "task.result.read": { params: ResultReadParams, result: ResultReadResult, errors: ResultReadErrors },
  "task.approval.respond": { params: ApprovalParams, result: ResolvedResult, errors: ApprovalErrors },
  "task.question.answer": { params: QuestionParams, result: ResolvedResult, errors: QuestionErrors },
  "task.message.send": { params: MessageParams, result: MessageResult, errors: MessageErrors },
  "task.cancel": { params: TaskIdParams, result: CancelResult, errors: TaskNotFound },
  ...OPERATOR_METHODS
} as const

type Methods = typeof BRIDGE_METHODS
export type BridgeMethod = keyof Methods
/** The params as a client writes them: the wire form, plain strings where the server brands. */
export type MethodParams<M extends BridgeMethod> = Schema.Schema.Encoded<Methods[M]["params"]>
/** The params as the server's handler receives them, decoded: task and request ids branded. */
export type DecodedParams<M extends BridgeMethod> = Schema.Schema.Type<Methods[M]["params"]>
export type MethodResult<M extends BridgeMethod> = Schema.Schema.Type<Methods[M]["result"]>
/** The frozen errors method `M` may fail with: the union of its error classes. */
export type MethodError<M extends BridgeMethod> = ErrorOf<Methods[M]["errors"]>

/**
 * The same table seen through a mapped type, so that indexing it with a generic method `M` gives
 * schemas of `DecodedParams<M>` / `MethodResult<M>` / `MethodError<M>` (a correlated access: the
 * server and the client stay generic in the method without a cast).
 */
export type BridgeContract = {
  readonly [M in BridgeMethod]: {
    readonly params: Schema.Schema<DecodedParams<M>, MethodParams<M>>
    readonly result: Schema.Schema<MethodResult<M>, Schema.Schema.Encoded<Methods[M]["result"]>>
    readonly errors: ErrorSet<MethodError<M>>
  }
}
export const BRIDGE_CONTRACT: BridgeContract = BRIDGE_METHODS

export const isBridgeMethod = (method: string): method is BridgeMethod =>
  Object.hasOwn(BRIDGE_METHODS, method)
