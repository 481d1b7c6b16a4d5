import { Schema } from "effect"

/**
 * Approvals and questions relayed to the human (bridge-internals §7, spec v0.3 §15): the
 * normalized payloads the chat sees, the answers it sends, and the pure validation of those
 * answers against the request. Provider-native shapes never appear here.
 */
export const Decision = Schema.Literal("approve_once", "approve_session", "deny", "cancel_task")
export type Decision = typeof Decision.Type

export const ApprovalCategory = Schema.Literal(
  "command",
  "file_change",
  "provider_permission",
  "network_permission",
  "mcp_tool",
  "other"
)
export type ApprovalCategory = typeof ApprovalCategory.Type

export const RequestedPermission = Schema.Struct({
  permission_id: Schema.String,
  kind: Schema.String,
  details: Schema.optional(Schema.Unknown)
})

/** How a file changes (Codex's PatchChangeKind; Claude's Write of a missing file is an add). */
export const FileChangeKind = Schema.Literal("add", "update", "delete")
export type FileChangeKind = typeof FileChangeKind.Type

/**
 * One file an approval would change: its display path (workdir-relative or `<outside-workdir>`)
 * and, where the provider sent the change, a bounded, redacted unified diff of it
 * (FileChangePreview). `diff_truncated` marks a diff cut (or left out) by the bounds.
 */
export const FileChange = Schema.Struct({
  path: Schema.String,
  kind: Schema.optional(FileChangeKind),
  diff: Schema.optional(Schema.String),
  diff_truncated: Schema.optional(Schema.Boolean)
})
export type FileChange = typeof FileChange.Type

export const ApprovalPayload = Schema.Struct({
  category: ApprovalCategory,
  title: Schema.String,
  available_decisions: Schema.Array(Decision),
  reason: Schema.optional(Schema.String),
  command_display: Schema.optional(Schema.String),
  relative_cwd: Schema.optional(Schema.String),
  file_changes: Schema.optional(Schema.Array(FileChange)),
  requested_permissions: Schema.optional(Schema.Array(RequestedPermission)),
  tool: Schema.optional(Schema.String),
  tool_input: Schema.optional(Schema.Unknown),
  additional_permissions: Schema.optional(Schema.Unknown),
  network_approval_context: Schema.optional(Schema.Unknown)
})
export type ApprovalPayload = typeof ApprovalPayload.Type

export const QuestionOption = Schema.Struct({
  option_id: Schema.String,
  label: Schema.String,
  description: Schema.optional(Schema.String),
  preview: Schema.optional(Schema.String)
})

export const Question = Schema.Struct({
  question_id: Schema.String,
  prompt: Schema.String,
  options: Schema.Array(QuestionOption),
  multi_select: Schema.Boolean,
  allow_free_text: Schema.Boolean
})
export type Question = typeof Question.Type

export const QuestionPayload = Schema.Struct({ questions: Schema.Array(Question) })
export type QuestionPayload = typeof QuestionPayload.Type

export const Answer = Schema.Struct({
  question_id: Schema.String,
  selected_option_ids: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  text: Schema.optional(Schema.String)
})
export type Answer = typeof Answer.Type

export const RequestKind = Schema.Literal("approval", "question")
export type RequestKind = typeof RequestKind.Type

export const RequestStatus = Schema.Literal("pending", "resolved", "stale")
export type RequestStatus = typeof RequestStatus.Type

export const ApprovalResolution = Schema.Struct({
  decision: Decision,
  granted_permission_ids: Schema.Array(Schema.String)
})
export type ApprovalResolution = typeof ApprovalResolution.Type

export const QuestionResolution = Schema.Struct({ answers: Schema.Array(Answer) })
export type QuestionResolution = typeof QuestionResolution.Type

/** A pending request as the chat sees it (task.get's `pending_request`). */
export const PendingRequestView = Schema.Struct({
  request_id: Schema.String,
  task_id: Schema.String,
  kind: RequestKind,
  status: RequestStatus,
  payload: Schema.Union(ApprovalPayload, QuestionPayload),
  created_at: Schema.String,
  expires_at: Schema.String,
  resolved_at: Schema.NullOr(Schema.String),
  resolution: Schema.NullOr(Schema.Union(ApprovalResolution, QuestionResolution))
})
export type PendingRequestView = typeof PendingRequestView.Type

/**
 * Is `decision` (with `granted`) acceptable for this approval? An empty available list does not
 * restrict decisions; granted ids must be among the requested permissions.
 */
export const checkDecision = (
  payload: ApprovalPayload,
  decision: Decision,
  granted: ReadonlyArray<string>
):
  | { readonly _tag: "ok" }
  | { readonly _tag: "invalid-decision" | "outside-policy"; readonly problem: string } => {
  if (payload.available_decisions.length > 0 && !payload.available_decisions.includes(decision)) {
    return { _tag: "invalid-decision", problem: `decision ${decision} is not offered for this request` }
  }
  const requested = new Set((payload.requested_permissions ?? []).map((p) => p.permission_id))
  const outside = granted.find((id) => !requested.has(id))
  if (outside !== undefined)
    return { _tag: "outside-policy", problem: "a granted permission id was not requested" }
  return { _tag: "ok" }
}

/**
 * Validate answers against the questions (bridge-internals §7): known, unrepeated question ids;
 * known, unrepeated options, at most one unless multi_select; text only where free text is
 * allowed; each answer has an option or non-empty text; every question answered.
 */
export const checkAnswers = (
  payload: QuestionPayload,
  answers: ReadonlyArray<Answer>
): string | undefined => {
  const questions = new Map(payload.questions.map((q) => [q.question_id, q] as const))
  const seen = new Set<string>()
  for (const answer of answers) {
    const question = questions.get(answer.question_id)
    if (question === undefined) return "unknown question_id"
    if (seen.has(answer.question_id)) return "a question is answered twice"
    seen.add(answer.question_id)
    const options = new Set(question.options.map((o) => o.option_id))
    const selected = answer.selected_option_ids
    if (new Set(selected).size !== selected.length) return "an option is selected twice"
    if (selected.some((id) => !options.has(id))) return "unknown option_id"
    if (selected.length > 1 && !question.multi_select) return "only one option may be selected"
    if (answer.text !== undefined && !question.allow_free_text)
      return "free text is not allowed for this question"
    const hasText = answer.text !== undefined && answer.text.trim() !== ""
    if (selected.length === 0 && !hasText) return "each answer needs an option or text"
  }
  if (seen.size !== questions.size) return "every question must be answered"
  return undefined
}
