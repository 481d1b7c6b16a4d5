import type { PermissionResult, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk"
import {
  type AgentError,
  AgentProviderError,
  AgentSessionNotResumable,
  type ApprovalCategory,
  type ApprovalPayload,
  type ApprovalResolution,
  type Decision,
  fitApproval,
  HostPathRedaction,
  type QuestionPayload,
  type QuestionResolution
} from "@serverfs/domain"
import type { NormalizedEvent } from "../ProviderAdapter.js"
import { relativeCwd } from "../RelativeCwd.js"
import type { CurrentFile } from "./ClaudeCurrentFile.js"
import { FILE_TOOLS, fileChangesOf, toolInputShown } from "./ClaudeFileChanges.js"

/**
 * Pure translations between Claude Code's permission callback and ServerFS's provider-neutral
 * interactions (spec v0.3 §15/§18, bridge-internals §7 "Claude"). Nothing here talks to a
 * process; the adapter wires it to `canUseTool`.
 */

/** What `canUseTool` receives besides the tool name and input (the subset the adapter reads). */
export interface AskContext {
  readonly suggestions?: ReadonlyArray<PermissionUpdate> | undefined
  readonly title?: string | undefined
  readonly displayName?: string | undefined
  readonly description?: string | undefined
  readonly decisionReason?: string | undefined
  readonly suppressAlwaysAllowRule?: boolean | undefined
}

/**
 * An approval answer as the adapter reads it. The bridge's contract (ApprovalResolution) has no
 * way to edit the tool input; an embedder that does answer with an edited input sets
 * `updated_input`, and that input (not the model's) is what Claude runs.
 */
export type ClaudeApprovalResolution = ApprovalResolution & {
  readonly updated_input?: Record<string, unknown>
}

const NETWORK_TOOLS: ReadonlySet<string> = new Set(["WebFetch", "WebSearch"])

export const categoryOf = (tool: string): ApprovalCategory =>
  tool === "Bash"
    ? "command"
    : FILE_TOOLS.has(tool)
      ? "file_change"
      : NETWORK_TOOLS.has(tool)
        ? "network_permission"
        : tool.startsWith("mcp__")
          ? "mcp_tool"
          : "other"

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/**
 * The session-scoped grant Claude's own "don't ask again this session" would apply, or none.
 * Claude offers rules for its settings files (localSettings, …); ServerFS never writes a settings
 * file, so a suggestion is kept only when it can be applied to the session instead: allow rules,
 * working directories, and the accept-edits mode — each rewritten to destination `session`.
 * Nothing is offered when Claude marks the ask as not to be remembered.
 */
export const sessionGrant = (context: AskContext): ReadonlyArray<PermissionUpdate> => {
  if (context.suppressAlwaysAllowRule === true) return []
  const out: Array<PermissionUpdate> = []
  for (const s of context.suggestions ?? []) {
    if (s.type === "addRules" && s.behavior === "allow" && s.rules.length > 0) {
      out.push({ ...s, destination: "session" })
    } else if (s.type === "addDirectories" && s.directories.length > 0) {
      out.push({ ...s, destination: "session" })
    } else if (s.type === "setMode" && s.mode === "acceptEdits") {
      out.push({ ...s, destination: "session" })
    }
  }
  // A grant made only of directories (no rule) would not spare the next identical ask.
  return out.some((s) => s.type !== "addDirectories") ? out : []
}

/**
 * The normalized approval for a tool call that reached Claude's ask path. A file tool's change
 * is previewed (ClaudeFileChanges: display path, kind, bounded redacted diff; `current` is what
 * a Write would replace) and its content leaves `tool_input`; the whole payload is fitted to the
 * interaction limit (`fitApproval`).
 */
export const approvalPayload = (
  tool: string,
  input: Record<string, unknown>,
  context: AskContext,
  where: { readonly cwd: string; readonly workdirRoot: string },
  offerSession: boolean,
  current: CurrentFile = { _tag: "unknown" }
): ApprovalPayload => {
  const category = categoryOf(tool)
  const decisions: Array<Decision> = [
    "approve_once",
    ...(offerSession ? (["approve_session"] as const) : []),
    "deny",
    "cancel_task"
  ]
  const command = tool === "Bash" ? str(input.command) : undefined
  const url = tool === "WebFetch" ? str(input.url) : undefined
  const reason = context.decisionReason ?? context.description
  const redaction = new HostPathRedaction(where.workdirRoot)
  return fitApproval((bounds) => {
    const changes = FILE_TOOLS.has(tool)
      ? fileChangesOf(tool, input, where.cwd, current, redaction, bounds)
      : undefined
    return {
      category,
      title: context.title ?? `Claude wants to use ${context.displayName ?? tool}`,
      available_decisions: decisions,
      ...(reason === undefined ? {} : { reason }),
      ...(command === undefined ? {} : { command_display: command }),
      relative_cwd: relativeCwd(where.workdirRoot, where.cwd),
      ...(changes === undefined ? {} : { file_changes: changes }),
      ...(url === undefined ? {} : { network_approval_context: { url } }),
      tool,
      tool_input: toolInputShown(tool, input)
    }
  })
}

const DENY_MESSAGE = "The user denied this action (ServerFS approval)."
export const CANCEL_MESSAGE = "The user cancelled the task (ServerFS approval)."

/** The answer to Claude for the human's decision. */
export const permissionResult = (
  input: Record<string, unknown>,
  resolution: ClaudeApprovalResolution,
  grant: ReadonlyArray<PermissionUpdate>
): PermissionResult => {
  const updatedInput = resolution.updated_input ?? input
  switch (resolution.decision) {
    case "approve_once":
      return { behavior: "allow", updatedInput }
    case "approve_session":
      // Offered only with a non-empty session grant; without one it is a plain allow.
      return grant.length === 0
        ? { behavior: "allow", updatedInput }
        : { behavior: "allow", updatedInput, updatedPermissions: [...grant] }
    case "cancel_task":
      return { behavior: "deny", message: CANCEL_MESSAGE, interrupt: true }
    default:
      return { behavior: "deny", message: DENY_MESSAGE }
  }
}

// ---- AskUserQuestion ---------------------------------------------------------------------------

interface ClaudeQuestion {
  readonly question: string
  readonly options: ReadonlyArray<{
    readonly label: string
    readonly description?: string
    readonly preview?: string
  }>
  readonly multiSelect: boolean
}

/**
 * Claude's AskUserQuestion input as ServerFS questions: question ids `q<index>`, option id = the
 * option's label (what Claude's answer mapping needs back), free text always allowed (Claude's
 * own UI always has "Other"). An input the answer mapping could not address unambiguously
 * (duplicate question texts, duplicate labels in one question) is refused.
 */
export const questionPayload = (
  input: Record<string, unknown>
): { readonly payload: QuestionPayload; readonly questions: ReadonlyArray<ClaudeQuestion> } | string => {
  const raw = input.questions
  if (!Array.isArray(raw) || raw.length === 0) return "AskUserQuestion without questions"
  const questions: Array<ClaudeQuestion> = []
  for (const q of raw as ReadonlyArray<Record<string, unknown>>) {
    const question = str(q?.question)
    if (question === undefined || question.trim() === "") return "a question without text"
    const options = (
      Array.isArray(q.options) ? (q.options as ReadonlyArray<Record<string, unknown>>) : []
    ).map((o) => ({
      label: str(o?.label) ?? "",
      ...(str(o?.description) === undefined ? {} : { description: str(o?.description) as string }),
      ...(str(o?.preview) === undefined ? {} : { preview: str(o?.preview) as string })
    }))
    if (options.some((o) => o.label === "")) return "an option without a label"
    if (new Set(options.map((o) => o.label)).size !== options.length) return "duplicate option labels"
    questions.push({ question, options, multiSelect: q.multiSelect === true })
  }
  if (new Set(questions.map((q) => q.question)).size !== questions.length) return "duplicate questions"
  return {
    questions,
    payload: {
      questions: questions.map((q, i) => ({
        question_id: `q${i}`,
        prompt: q.question,
        options: q.options.map((o) => ({ option_id: o.label, ...o })),
        multi_select: q.multiSelect,
        allow_free_text: true
      }))
    }
  }
}

/**
 * The `answers` mapping Claude expects: `{<question text>: "label1, label2, free text"}`.
 * Option ids are the labels; the bridge has already validated the answers against the payload.
 */
export const answersFor = (
  questions: ReadonlyArray<ClaudeQuestion>,
  resolution: QuestionResolution
): Record<string, string> => {
  const out: Record<string, string> = {}
  questions.forEach((q, i) => {
    const answer = resolution.answers.find((a) => a.question_id === `q${i}`)
    if (answer === undefined) return
    const parts = [...answer.selected_option_ids]
    if (answer.text !== undefined && answer.text.trim() !== "") parts.push(answer.text.trim())
    out[q.question] = parts.join(", ")
  })
  return out
}

// ---- progress events ---------------------------------------------------------------------------

const MAX_INPUT_JSON = 8192

/** A tool input small enough to be an event field, else a marker of its size. */
const boundedInput = (input: unknown): unknown => {
  const json = JSON.stringify(input) ?? ""
  return json.length <= MAX_INPUT_JSON
    ? input
    : { truncated: true, size_bytes: Buffer.byteLength(json, "utf8") }
}

/** The event of one assistant tool_use block (command / file change / other tool start). */
export const toolStarted = (tool: string, id: string, input: Record<string, unknown>): NormalizedEvent => {
  if (tool === "Bash")
    return { type: "command.started", payload: { command: str(input.command) ?? "", tool_use_id: id } }
  if (FILE_TOOLS.has(tool)) {
    const file = str(input.file_path) ?? str(input.notebook_path)
    return {
      type: "file_change.started",
      payload: { tool, tool_use_id: id, ...(file === undefined ? {} : { path: file }) }
    }
  }
  return { type: "tool.started", payload: { tool, tool_use_id: id, input: boundedInput(input) } }
}

/** The event of a tool_result: which tool finished and whether it failed (never its output). */
export const toolCompleted = (tool: string | undefined, id: string, isError: boolean): NormalizedEvent => {
  const type =
    tool === "Bash"
      ? "command.completed"
      : tool !== undefined && FILE_TOOLS.has(tool)
        ? "file_change.completed"
        : "tool.completed"
  return { type, payload: { ...(tool === undefined ? {} : { tool }), tool_use_id: id, is_error: isError } }
}

/** The longest provider error text an AgentError message quotes (a CLI's stderr can be long). */
export const MAX_ERROR_TEXT = 500

/** The part of the SDK's result message a failure quotes. */
export type ResultSummary =
  | { readonly _tag: "Success"; readonly isError: boolean; readonly text: string }
  | { readonly _tag: "Error"; readonly errors: ReadonlyArray<string> }

/** How a turn ended without success, as `turnFailure` reads it. */
export interface TurnEnd {
  /** The bridge asked the turn to stop: its end is not a provider failure. */
  readonly cancelRequested: boolean
  /** The turn continued a recorded session. */
  readonly resumed: boolean
  /** The SDK's result message, if one came. */
  readonly result: ResultSummary | undefined
  /** What the SDK's iterator threw, if it did. */
  readonly thrown: unknown
  /** The CLI's stderr (bounded). */
  readonly stderr: string
}

/**
 * The task's error for a turn that did not succeed. The CLI's texts name host paths (the
 * workdir, the home directory, temp files): the one redaction rule makes them `<workdir>` /
 * `<path>`, bounded, before they become the task's error message.
 */
export const turnFailure = (end: TurnEnd, redaction: HostPathRedaction): AgentError => {
  if (end.cancelRequested)
    return new AgentProviderError({ message: "the turn was interrupted at the user's request" })
  const result = end.result
  const details =
    result === undefined
      ? [end.thrown instanceof Error ? end.thrown.message : "", end.stderr]
          .filter((s) => s.trim() !== "")
          .join(" — ")
      : result._tag === "Success"
        ? result.text
        : result.errors.join("; ")
  if (end.resumed && /No conversation found/i.test(details)) {
    return new AgentSessionNotResumable({
      message: "Claude Code has no conversation with the recorded session id; start a new task instead"
    })
  }
  const reason = redaction.message(details, MAX_ERROR_TEXT)
  return new AgentProviderError({
    message:
      result === undefined
        ? `the Claude Code CLI ended without a result${reason === "" ? "" : `: ${reason}`}`
        : `Claude Code reported an error${reason === "" ? "" : `: ${reason}`}`
  })
}
