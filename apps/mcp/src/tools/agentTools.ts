import {
  AgentRuntimeNotAllowed,
  AnswerAgentQuestionInput,
  CancelResult,
  EventsResult,
  InvalidRequest,
  ListAgentModelsInput,
  ListAgentRuntimesInput,
  MessageResult,
  ReadAgentTaskEventsInput,
  ReadAgentTaskResultInput,
  ResolvedResult,
  RespondAgentApprovalInput,
  ResultReadResult,
  RuntimeListResult,
  RuntimeModelsResult,
  SendAgentMessageInput,
  SubmitAgentTaskInput,
  SubmitResult,
  TaskIdInput,
  TaskView,
  type WorkdirNotFound
} from "@serverfs/domain"
import { authorizeSubmission, normalizeRequestPath, type Workdir } from "@serverfs/policy"
import type { BridgeClientService } from "@serverfs/rpc"
import type { AuditFields } from "@serverfs/telemetry-local"
import { walkStartDirectory } from "@serverfs/workspace"
import { Effect } from "effect"
import { type AnyTool, defineTool, type ToolAnnotations } from "../ToolDefinition.js"

/**
 * The ten agent tools (tool-contracts §8, spec v0.3 §13, v0.7). The MCP process holds no
 * provider code and no provider credential: each tool is a thin client of the bridge's RPC.
 * Submission is authorized locally first — workdir, Agent mode, runtime, profile, and the start
 * directory through the same policy and descriptor walk as every read — and nothing is sent
 * when that fails. Bridge results pass through unchanged.
 */
export interface AgentToolContext {
  readonly client: BridgeClientService
  readonly workdir: (alias: string) => Effect.Effect<Workdir, WorkdirNotFound>
  readonly workdirs: ReadonlyArray<Workdir>
  readonly rootOf: (workdir: Workdir) => number
}

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }
const annotations = (destructive: boolean, idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: true
})

/** Runtime names allowlisted on at least one workdir: the only ones a client ever sees. */
const allowlisted = (workdirs: ReadonlyArray<Workdir>): ReadonlySet<string> =>
  new Set(workdirs.flatMap((w) => w.agentRuntimes))

const withCorrelation = (fields: AuditFields, correlationId: string | null | undefined): AuditFields =>
  correlationId === null || correlationId === undefined
    ? fields
    : { ...fields, correlation_id: correlationId }

export const agentTools = (context: AgentToolContext): ReadonlyArray<AnyTool> => {
  const { client } = context
  const visible = allowlisted(context.workdirs)

  // The one submit rule (libs/policy) and the start directory's walk (libs/workspace), as the
  // bridge checks them too; the walk's filesystem errors are reported as they are.
  const authorizeSubmit = (input: Pick<SubmitAgentTaskInput, "workdir" | "runtime" | "profile" | "path">) =>
    Effect.gen(function* () {
      const workdir = yield* context.workdir(input.workdir)
      yield* authorizeSubmission(workdir, input)
      const resolved = yield* walkStartDirectory(context.rootOf(workdir), workdir, input.path)
      return resolved.relative
    })

  const normalizedPath = (path: string): string => {
    const n = normalizeRequestPath(path)
    return n._tag === "ok" ? n.components.join("/") : path
  }

  return [
    defineTool({
      name: "list_agent_runtimes",
      title: "List agent runtimes",
      description:
        "List the coding-agent runtimes this server can delegate to (only those allowed on some workdir), with availability, version and capabilities: persistent sessions, live steering, interactive approvals and questions, and what survives a bridge restart.",
      annotations: READ,
      input: ListAgentRuntimesInput,
      output: RuntimeListResult,
      run: () =>
        visible.size === 0
          ? Effect.succeed({ runtimes: [] })
          : Effect.map(client.call("runtime.list", {}), (result) => ({
              runtimes: result.runtimes
                .filter((r) => visible.has(r.name))
                // A runtime whose probe failed is reported only as unavailable.
                .map((r) => (r.available ? r : { name: r.name, available: false }))
            })),
      audit: (_input, output) => ({ returned: output.runtimes.length }),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "list_agent_models",
      title: "List an agent runtime's models",
      description:
        "List the models a coding-agent runtime offers (Codex's model catalog, Claude Code's models for the signed-in account): id, display name, default, hidden, reasoning levels. status is ok, unsupported (the runtime lists none) or unavailable. Any listed id can be passed as submit_agent_task's model. With workdir and task_prompt (advice mode) the submission's checks run first and model_advice is returned (no advisor is configured: disabled). Starts no task.",
      annotations: READ,
      input: ListAgentModelsInput,
      output: RuntimeModelsResult,
      run: (input) =>
        Effect.gen(function* () {
          const advice =
            input.workdir !== null ||
            input.task_prompt !== null ||
            input.path !== "" ||
            input.profile !== "workspace-write"
          if (!advice) {
            // Discovery alone: only for a runtime some workdir allowlists (no workdir to name it by).
            if (!visible.has(input.runtime)) {
              return yield* new AgentRuntimeNotAllowed({
                message: `runtime '${input.runtime}' is not allowed on any workdir`
              })
            }
            return yield* client.call("runtime.models", { runtime: input.runtime })
          }
          if (input.workdir === null || input.task_prompt === null) {
            return yield* new InvalidRequest({
              message: "advice mode needs both workdir and task_prompt (path and profile only with them)"
            })
          }
          // The submission's own authorization, locally first, as for submit_agent_task.
          const path = yield* authorizeSubmit({ ...input, workdir: input.workdir })
          return yield* client.call("runtime.models", {
            runtime: input.runtime,
            workdir: input.workdir,
            task_prompt: input.task_prompt,
            path,
            profile: input.profile
          })
        }),
      audit: (input, output) => ({
        runtime: input.runtime,
        status: output.status,
        returned: output.models.length,
        ...(output.model_advice === undefined ? {} : { advice: output.model_advice.status })
      }),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "submit_agent_task",
      title: "Delegate a task to a coding agent",
      description:
        "Start a long-running task with a coding agent (Codex, Claude Code) in a workdir. Returns a task_id at once and never waits: poll get_agent_task or read_agent_task_events, answer approvals with respond_agent_approval and questions with answer_agent_question. A workspace-write task may modify files and holds the workdir lease while it runs. To follow up on a finished task, submit again with continue_from_task_id.",
      annotations: annotations(true, false),
      input: SubmitAgentTaskInput,
      output: SubmitResult,
      run: (input) =>
        Effect.flatMap(authorizeSubmit(input), (path) =>
          client.call("task.submit", {
            runtime: input.runtime,
            workdir: input.workdir,
            path,
            profile: input.profile,
            prompt: input.prompt,
            // Optional keys are sent only when set.
            ...(input.model === null ? {} : { model: input.model }),
            ...(input.continue_from_task_id === null
              ? {}
              : { continue_from_task_id: input.continue_from_task_id }),
            ...(input.correlation_id === null ? {} : { correlation_id: input.correlation_id }),
            ...(input.idempotency_key === null ? {} : { idempotency_key: input.idempotency_key })
          })
        ),
      audit: (input, output) =>
        withCorrelation(
          {
            path: normalizedPath(input.path),
            runtime: input.runtime,
            profile: input.profile,
            idempotency_key: input.idempotency_key ?? undefined,
            task_id: output.task_id,
            status: output.status
          },
          output.correlation_id
        ),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "get_agent_task",
      title: "Get an agent task",
      description:
        "The state of a delegated task: status (queued, starting, running, waiting_for_approval, waiting_for_question, succeeded, failed, cancelled, interrupted), the pending approval or question when waiting, the final response when done (large ones are previewed; read them with read_agent_task_result), errors, and its immutable manifest.",
      annotations: READ,
      input: TaskIdInput,
      output: TaskView,
      run: (input) => client.call("task.get", input),
      audit: (input, output) =>
        withCorrelation({ task_id: input.task_id, status: output.status }, output.correlation_id),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "read_agent_task_events",
      title: "Read agent task events",
      description:
        "Page through a task's progress events (agent messages, commands, file changes, approvals, questions, lifecycle). Pass the previous next_after_event_id as after_event_id to continue; pages never skip or repeat an event.",
      annotations: READ,
      input: ReadAgentTaskEventsInput,
      output: EventsResult,
      run: (input) => client.call("task.events", input),
      audit: (input, output) =>
        withCorrelation({ task_id: input.task_id, returned: output.events.length }, output.correlation_id),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "read_agent_task_result",
      title: "Read a large agent result",
      description:
        "Read a spooled final response (larger than the inline limit) in exact UTF-8 chunks: continue from next_offset_bytes until eof. Concatenating the chunks reproduces the result byte for byte (its sha256 is on the task).",
      annotations: READ,
      input: ReadAgentTaskResultInput,
      output: ResultReadResult,
      run: (input) => client.call("task.result.read", input),
      audit: (input, output) =>
        withCorrelation(
          { task_id: input.task_id, offset_bytes: input.offset_bytes, max_bytes: input.max_bytes },
          output.correlation_id
        ),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "respond_agent_approval",
      title: "Answer an agent's approval request",
      description:
        "Decide a pending approval: approve_once, approve_session (only where offered; never persisted beyond the agent's session), deny, or cancel_task (denies and cancels the task). Only the task's current request can be answered, once.",
      annotations: annotations(true, true),
      input: RespondAgentApprovalInput,
      output: ResolvedResult,
      run: (input) =>
        client.call("task.approval.respond", {
          task_id: input.task_id,
          request_id: input.request_id,
          decision: input.decision,
          ...(input.granted_permission_ids === null
            ? {}
            : { granted_permission_ids: input.granted_permission_ids })
        }),
      audit: (input, output) =>
        withCorrelation(
          { task_id: input.task_id, request_id: input.request_id, decision: input.decision },
          output.correlation_id
        ),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "answer_agent_question",
      title: "Answer an agent's question",
      description:
        "Answer a pending question: one answer per question, with selected option ids and/or free text where allowed. Only the task's current request can be answered, once.",
      annotations: annotations(false, true),
      input: AnswerAgentQuestionInput,
      output: ResolvedResult,
      run: (input) =>
        client.call("task.question.answer", {
          task_id: input.task_id,
          request_id: input.request_id,
          // Each answer is sent without null fields.
          answers: input.answers.map((a) => ({
            question_id: a.question_id,
            selected_option_ids: [...a.selected_option_ids],
            ...(a.text === null ? {} : { text: a.text })
          }))
        }),
      audit: (input, output) =>
        withCorrelation(
          { task_id: input.task_id, request_id: input.request_id, answer_count: input.answers.length },
          output.correlation_id
        ),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "send_agent_message",
      title: "Steer a running agent task",
      description:
        "Send steering to a task's active turn (e.g. 'only touch the API layer'). Works only while the task runs and its runtime supports live steering; for a finished task, submit a new task with continue_from_task_id.",
      annotations: annotations(true, false),
      input: SendAgentMessageInput,
      output: MessageResult,
      run: (input) => client.call("task.message.send", input),
      audit: (input, output) =>
        withCorrelation(
          { task_id: input.task_id, message_bytes: Buffer.byteLength(input.message, "utf8") },
          output.correlation_id
        ),
      unexpected: "AGENT_BRIDGE_ERROR"
    }),
    defineTool({
      name: "cancel_agent_task",
      title: "Cancel an agent task",
      description:
        "Cancel a task: it is cancelled at once and the agent is told to stop. Returns the final status (the current one if the task had already finished). Repeating it changes nothing.",
      annotations: annotations(true, true),
      input: TaskIdInput,
      output: CancelResult,
      run: (input) => client.call("task.cancel", input),
      audit: (input, output) =>
        withCorrelation({ task_id: input.task_id, status: output.status }, output.correlation_id),
      unexpected: "AGENT_BRIDGE_ERROR"
    })
  ]
}

/** Agent tools are registered only when the bridge is enabled and some workdir delegates. */
export const agentToolsEnabled = (bridgeEnabled: boolean, workdirs: ReadonlyArray<Workdir>): boolean =>
  bridgeEnabled && workdirs.some((w) => w.agentMode !== "disabled")
