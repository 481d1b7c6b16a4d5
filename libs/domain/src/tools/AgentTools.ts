import { Schema } from "effect"
import { Decision } from "../agent/Interactions.js"
import { Profile, RuntimeName } from "../agent/Runtime.js"
import { described, IntAtLeast, withDefault } from "./Fields.js"

/**
 * Inputs of the ten agent tools (tool-contracts §8). The outputs are the bridge's results
 * (libs/domain/src/rpc/Methods.ts), passed through unchanged.
 */
const TaskId = described(Schema.String, "Task id (agt_…) from submit_agent_task.")
const RequestId = described(Schema.String, "Request id (req_…) of the pending approval or question.")
const NullableText = (description: string) => withDefault(Schema.NullOr(Schema.String), null, description)
const IntBetween = (min: number, max: number) => IntAtLeast(min).pipe(Schema.lessThanOrEqualTo(max))

export const ListAgentRuntimesInput = Schema.Struct({})

/**
 * list_agent_models (v0.9): just `runtime` lists its models; workdir + task_prompt together ask
 * for advice too (path and profile only with them), after submit's own checks.
 */
export const ListAgentModelsInput = Schema.Struct({
  runtime: described(RuntimeName, "Runtime whose models to list; it must be allowed on some workdir."),
  workdir: NullableText("Advice mode: the workdir the task would run in (with task_prompt)."),
  task_prompt: NullableText("Advice mode: the task you would submit (with workdir)."),
  path: withDefault(Schema.String, "", "Advice mode: start directory relative to the workdir root."),
  profile: withDefault(Profile, "workspace-write", "Advice mode: the profile the task would run with.")
})
export type ListAgentModelsInput = typeof ListAgentModelsInput.Type

export const SubmitAgentTaskInput = Schema.Struct({
  runtime: described(
    RuntimeName,
    "Runtime to delegate to; it must be allowed on the workdir (see list_workdirs)."
  ),
  workdir: described(Schema.String, "Workdir alias the task runs in."),
  prompt: described(Schema.String, "The task for the agent, as you would type it to it."),
  path: withDefault(Schema.String, "", "Start directory relative to the workdir root."),
  profile: withDefault(
    Profile,
    "workspace-write",
    "review, or workspace-write (may modify files; holds the workdir lease)."
  ),
  continue_from_task_id: NullableText(
    "A finished task whose provider session to continue (same runtime and workdir)."
  ),
  correlation_id: NullableText("Opaque id of yours, echoed on the task and its events (≤256 bytes)."),
  idempotency_key: NullableText(
    "Resubmitting with the same key and request returns the same task (≤256 bytes)."
  ),
  model: NullableText(
    "Provider model for this task only (one list_agent_models shows, where the runtime lists models); null keeps the provider's own default."
  )
})
export type SubmitAgentTaskInput = typeof SubmitAgentTaskInput.Type

export const TaskIdInput = Schema.Struct({ task_id: TaskId })
export type TaskIdInput = typeof TaskIdInput.Type

export const ReadAgentTaskEventsInput = Schema.Struct({
  task_id: TaskId,
  after_event_id: withDefault(
    IntAtLeast(0),
    0,
    "Return events after this id (the previous next_after_event_id)."
  ),
  limit: withDefault(IntBetween(1, 500), 100, "Most events to return.")
})
export type ReadAgentTaskEventsInput = typeof ReadAgentTaskEventsInput.Type

export const ReadAgentTaskResultInput = Schema.Struct({
  task_id: TaskId,
  offset_bytes: withDefault(
    IntAtLeast(0),
    0,
    "Byte offset into the spooled result (the previous next_offset_bytes)."
  ),
  max_bytes: withDefault(
    IntBetween(1, 65536),
    65536,
    "Most bytes to return; the chunk ends on a whole character."
  )
})
export type ReadAgentTaskResultInput = typeof ReadAgentTaskResultInput.Type

export const RespondAgentApprovalInput = Schema.Struct({
  task_id: TaskId,
  request_id: RequestId,
  decision: described(
    Decision,
    "approve_once, approve_session, deny, or cancel_task (also cancels the task)."
  ),
  granted_permission_ids: withDefault(
    Schema.NullOr(Schema.Array(Schema.String)),
    null,
    "For permission requests: the requested permission ids you grant (null grants what was asked)."
  )
})
export type RespondAgentApprovalInput = typeof RespondAgentApprovalInput.Type

export const QuestionAnswerInput = Schema.Struct({
  question_id: Schema.String,
  selected_option_ids: withDefault(Schema.Array(Schema.String), [], "Chosen option ids."),
  text: withDefault(Schema.NullOr(Schema.String), null, "Free text, where the question allows it.")
})

export const AnswerAgentQuestionInput = Schema.Struct({
  task_id: TaskId,
  request_id: RequestId,
  answers: Schema.Array(QuestionAnswerInput).pipe(Schema.minItems(1))
})
export type AnswerAgentQuestionInput = typeof AnswerAgentQuestionInput.Type

export const SendAgentMessageInput = Schema.Struct({
  task_id: TaskId,
  message: described(Schema.String, "Steering for the task's active turn (≤64 KiB).")
})
export type SendAgentMessageInput = typeof SendAgentMessageInput.Type
