import { Schema } from "effect"
import { Answer } from "../agent/Interactions.js"
import { RuntimeInfo } from "../agent/Runtime.js"
import { TaskEvent } from "../agent/TaskEvent.js"
import { TaskStatus } from "../agent/TaskState.js"
import { TaskView } from "../agent/TaskView.js"

/**
 * The bridge methods (bridge-internals §2) as Effect Schemas shared by the server and both
 * clients. Params are decoded strictly: unknown keys and wrong types are INVALID_REQUEST, and a
 * boolean is never an integer. Values the bridge itself must judge (a decision, a profile) are
 * plain strings here so the bridge can answer with its own code.
 */
const Int = Schema.Number.pipe(Schema.int())
const OptionalText = Schema.optional(Schema.NullOr(Schema.String))

export const RuntimeListParams = Schema.Struct({})
export const RuntimeListResult = Schema.Struct({ runtimes: Schema.Array(RuntimeInfo) })

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

export const TaskIdParams = Schema.Struct({ task_id: Schema.String })

export const EventsParams = Schema.Struct({
  task_id: Schema.String,
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
  task_id: Schema.String,
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
  task_id: Schema.String,
  request_id: Schema.String,
  decision: Schema.String,
  granted_permission_ids: Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
})
export const QuestionParams = Schema.Struct({
  task_id: Schema.String,
  request_id: Schema.String,
  answers: Schema.Array(Answer)
})
export const ResolvedResult = Schema.Struct({
  task_id: Schema.String,
  request_id: Schema.String,
  resolved: Schema.Literal(true),
  correlation_id: Schema.NullOr(Schema.String)
})
export type ResolvedResult = typeof ResolvedResult.Type

export const MessageParams = Schema.Struct({ task_id: Schema.String, message: Schema.String })
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

/** Method name → its params and result schemas. */
export const BRIDGE_METHODS = {
  "runtime.list": { params: RuntimeListParams, result: RuntimeListResult },
  "task.submit": { params: SubmitParams, result: SubmitResult },
  "task.get": { params: TaskIdParams, result: TaskView },
  "task.events": { params: EventsParams, result: EventsResult },
  "task.result.read": { params: ResultReadParams, result: ResultReadResult },
  "task.approval.respond": { params: ApprovalParams, result: ResolvedResult },
  "task.question.answer": { params: QuestionParams, result: ResolvedResult },
  "task.message.send": { params: MessageParams, result: MessageResult },
  "task.cancel": { params: TaskIdParams, result: CancelResult }
} as const

export type BridgeMethod = keyof typeof BRIDGE_METHODS
export type MethodParams<M extends BridgeMethod> = Schema.Schema.Type<(typeof BRIDGE_METHODS)[M]["params"]>
export type MethodResult<M extends BridgeMethod> = Schema.Schema.Type<(typeof BRIDGE_METHODS)[M]["result"]>
export const isBridgeMethod = (method: string): method is BridgeMethod =>
  Object.hasOwn(BRIDGE_METHODS, method)
