import {
  type AgentError,
  AgentProviderDisconnected,
  AgentProviderError,
  type ApprovalPayload,
  type ApprovalResolution,
  Decision,
  type FileChangeKind,
  fitApproval,
  type HostPathRedaction,
  MAX_FILE_CHANGES_DIFF_BYTES,
  previewFileChanges,
  type Question,
  type QuestionPayload,
  type QuestionResolution,
  retainedDiff,
  wholeFileDiff
} from "@serverfs/domain"
import type { NormalizedEvent } from "../ProviderAdapter.js"
import { relativeCwd } from "../RelativeCwd.js"
import type { RequestError } from "./CodexTransport.js"
import type {
  CommandExecutionApprovalDecision,
  CommandExecutionRequestApprovalParams,
  FileChangeRequestApprovalParams,
  FileUpdateChange,
  GrantedPermissionProfile,
  PermissionsRequestApprovalParams,
  PermissionsRequestApprovalResponse,
  ThreadItem,
  ToolRequestUserInputParams,
  ToolRequestUserInputResponse
} from "./protocol/generated/v2/index.js"

/**
 * Codex App Server ↔ ServerFS, as pure functions (spec v0.3 §15–§17, bridge-internals §7):
 * the normalized approval and question payloads built from Codex's server requests, the native
 * replies built from the human's answers, progress events built from thread items. Host paths
 * in everything shown go through the one redaction rule (`HostPathRedaction`, spec §16): paths
 * workdir-relative or `<outside-workdir>`, command lines with the root made relative, native
 * permission data with every path key redacted. Nothing here talks to Codex.
 */

// ---- decisions --------------------------------------------------------------------------------
type NativeDecision = "accept" | "acceptForSession" | "decline" | "cancel"

/** The one translation table, both ways (amendment decisions have no entry: never offered). */
const DECISIONS: ReadonlyArray<readonly [Decision, NativeDecision]> = [
  ["approve_once", "accept"],
  ["approve_session", "acceptForSession"],
  ["deny", "decline"],
  ["cancel_task", "cancel"]
]

/**
 * What Codex 0.171 honours for a command or a file-change approval whether or not it lists it:
 * `decline` (the action does not run, the model is told "rejected by user") and
 * `acceptForSession` (an identical command, or a patch to an already approved path, is not asked
 * again) — both proven against the real binary (libs/adapters/test/codex/decisions.test.ts). For
 * an escalated command Codex lists only accept, an execpolicy amendment and cancel.
 */
const HONOURED: ReadonlyArray<Decision> = ["approve_once", "approve_session", "deny", "cancel_task"]

/**
 * The decisions offered for a Codex approval: what Codex honours for that request, plus whatever
 * its `availableDecisions` lists that the table translates. Amendment decisions
 * (`acceptWithExecpolicyAmendment`, `applyNetworkPolicyAmendment`) are never offered: they would
 * persist rules into the user's Codex configuration.
 */
export const decisionsFrom = (
  available: ReadonlyArray<CommandExecutionApprovalDecision> | null | undefined
): ReadonlyArray<Decision> => {
  const offered = new Set<Decision>(HONOURED)
  for (const d of available ?? []) {
    const row = DECISIONS.find(([, native]) => native === d)
    if (row !== undefined) offered.add(row[0])
  }
  return Decision.literals.filter((d) => offered.has(d))
}

/** The native decision for the human's (the table); anything unknown declines. */
export const nativeDecision = (decision: string): NativeDecision =>
  DECISIONS.find(([normalized]) => normalized === decision)?.[1] ?? "decline"

// ---- approvals --------------------------------------------------------------------------------
const optional = <K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } =>
  (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

export const commandApproval = (
  params: CommandExecutionRequestApprovalParams,
  redaction: HostPathRedaction
): ApprovalPayload => {
  const command = params.command ?? (params.commandActions ?? []).map((a) => a.command).join(" && ")
  // Codex asks for network access with no command at all: the chat is shown the host instead
  // of an empty command (a DNS name is at most 253 characters).
  const host = params.networkApprovalContext?.host
  const networkOnly = command === "" && typeof host === "string" && host !== ""
  return {
    category: "command",
    title: networkOnly
      ? `Codex wants network access to ${host.slice(0, 253)}`
      : "Codex wants to run a command",
    available_decisions: [...decisionsFrom(params.availableDecisions)],
    ...optional("reason", params.reason),
    ...(networkOnly ? {} : { command_display: redaction.command(command) }),
    ...optional(
      "relative_cwd",
      params.cwd === null || params.cwd === undefined ? undefined : relativeCwd(redaction, params.cwd)
    ),
    ...optional(
      "additional_permissions",
      params.additionalPermissions === null || params.additionalPermissions === undefined
        ? undefined
        : redaction.value(params.additionalPermissions)
    ),
    ...optional("network_approval_context", params.networkApprovalContext)
  }
}

/**
 * A change of a Codex `fileChange` item as the turn keeps it until its approval: the host path
 * (redacted when shown), the kind, and a diff already bounded in memory (`retainedDiff`).
 */
export interface CodexFileChange {
  readonly path: string
  readonly kind: FileChangeKind
  readonly diff: string
  readonly omittedBytes: number
}

/** What one item may hold in memory: beyond it, a change keeps its path and kind only. */
const ITEM_RETAINED_BYTES = 2 * MAX_FILE_CHANGES_DIFF_BYTES

/**
 * An item's changes, kept for its approval. Codex 0.171 sends an update's `diff` as unified
 * hunks, an add's and a delete's as the file's whole content: those become diffs against empty.
 */
export const retainChanges = (changes: ReadonlyArray<FileUpdateChange>): ReadonlyArray<CodexFileChange> => {
  let budget = ITEM_RETAINED_BYTES
  return changes.map((c): CodexFileChange => {
    const kind = c.kind.type
    const full =
      kind === "add" ? wholeFileDiff(null, c.diff) : kind === "delete" ? wholeFileDiff(c.diff, null) : c.diff
    const kept = budget > 0 ? retainedDiff(full) : { diff: "", omittedBytes: Buffer.byteLength(full, "utf8") }
    budget -= Buffer.byteLength(kept.diff, "utf8")
    return { path: c.path, kind, ...kept }
  })
}

/**
 * A file-change approval: each change of the item with its kind and bounded, redacted diff
 * (FileChangePreview); without the item's changes, grantRoot's display path alone.
 */
export const fileChangeApproval = (
  params: FileChangeRequestApprovalParams,
  changes: ReadonlyArray<CodexFileChange>,
  redaction: HostPathRedaction
): ApprovalPayload =>
  fitApproval((bounds) => ({
    category: "file_change",
    title: "Codex wants to change files",
    available_decisions: [...decisionsFrom(null)],
    ...optional("reason", params.reason),
    file_changes:
      changes.length > 0
        ? previewFileChanges(
            changes.map((c) => ({ ...c, path: redaction.path(c.path) })),
            redaction,
            bounds
          )
        : params.grantRoot === null || params.grantRoot === undefined
          ? []
          : [{ path: redaction.path(params.grantRoot) }]
  }))

const permissionKind = (key: string): string =>
  key === "fileSystem" ? "file_system" : key === "network" ? "network" : key

/** The top-level permission categories Codex asked for (those with a value). */
const requestedPermissionIds = (params: PermissionsRequestApprovalParams): ReadonlyArray<string> =>
  Object.entries(params.permissions as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k]) => k)

export const permissionApproval = (
  params: PermissionsRequestApprovalParams,
  redaction: HostPathRedaction
): ApprovalPayload => {
  const native = params.permissions as Record<string, unknown>
  return {
    category: "provider_permission",
    title: "Codex asks for additional permissions",
    available_decisions: [...Decision.literals],
    ...optional("reason", params.reason),
    relative_cwd: relativeCwd(redaction, params.cwd),
    requested_permissions: requestedPermissionIds(params).map((id) => ({
      permission_id: id,
      kind: permissionKind(id),
      details: redaction.value(native[id])
    }))
  }
}

export const PERMISSION_DENIED_REPLY: PermissionsRequestApprovalResponse = { permissions: {}, scope: "turn" }

/**
 * approve_once / approve_session: the granted categories (all requested ones when the human
 * did not narrow the set) with turn / session scope; anything else: nothing granted.
 */
export const permissionReply = (
  params: PermissionsRequestApprovalParams,
  resolution: ApprovalResolution
): PermissionsRequestApprovalResponse => {
  if (resolution.decision !== "approve_once" && resolution.decision !== "approve_session") {
    return PERMISSION_DENIED_REPLY
  }
  const requested = requestedPermissionIds(params)
  const granted =
    resolution.granted_permission_ids.length > 0
      ? requested.filter((id) => resolution.granted_permission_ids.includes(id))
      : requested
  const native = params.permissions as Record<string, unknown>
  const permissions: Record<string, unknown> = {}
  for (const id of granted) permissions[id] = native[id]
  return {
    permissions: permissions as GrantedPermissionProfile,
    scope: resolution.decision === "approve_session" ? "session" : "turn"
  }
}

// ---- questions --------------------------------------------------------------------------------
const optionId = (questionIndex: number, optionIndex: number): string => `opt_${questionIndex}_${optionIndex}`

/** `undefined` when a question is secret: secrets are never relayed through the chat. */
export const questionPayload = (params: ToolRequestUserInputParams): QuestionPayload | undefined => {
  if (params.questions.some((q) => q.isSecret)) return undefined
  return {
    questions: params.questions.map(
      (q, qi): Question => ({
        question_id: q.id,
        prompt:
          q.header !== "" && !q.question.startsWith(q.header) ? `${q.header}: ${q.question}` : q.question,
        options: (q.options ?? []).map((o, oi) => ({
          option_id: optionId(qi, oi),
          label: o.label,
          ...(o.description === "" ? {} : { description: o.description })
        })),
        multi_select: false,
        allow_free_text: q.isOther || (q.options ?? []).length === 0
      })
    )
  }
}

/** `{answers: {<questionId>: {answers: [selected labels…, free text]}}}`. */
export const questionReply = (
  params: ToolRequestUserInputParams,
  resolution: QuestionResolution
): ToolRequestUserInputResponse => {
  const answers: Record<string, { answers: Array<string> }> = {}
  params.questions.forEach((q, qi) => {
    const answer = resolution.answers.find((a) => a.question_id === q.id)
    if (answer === undefined) return
    const labels = (q.options ?? []).flatMap((o, oi) =>
      answer.selected_option_ids.includes(optionId(qi, oi)) ? [o.label] : []
    )
    const text = answer.text?.trim()
    answers[q.id] = { answers: text === undefined || text === "" ? labels : [...labels, text] }
  })
  return { answers }
}

// ---- progress events --------------------------------------------------------------------------
export interface AgentMessage {
  readonly id: string
  readonly text: string
  readonly phase: string | null
}

/** The final text: the last agent message in phase `final_answer`, else the last one, else "". */
export const finalTextOf = (messages: ReadonlyArray<AgentMessage>): string => {
  const finals = messages.filter((m) => m.phase === "final_answer")
  return (finals[finals.length - 1] ?? messages[messages.length - 1])?.text ?? ""
}

/**
 * The event of a thread item starting or completing. Completed agent messages become
 * `agent.message` (never deltas); commands and file changes `item.started` / `item.completed`
 * with workdir-relative paths; user messages and reasoning are not recorded.
 */
export const itemEvent = (
  item: ThreadItem,
  phase: "started" | "completed",
  redaction: HostPathRedaction
): NormalizedEvent | undefined => {
  const type = `item.${phase}`
  switch (item.type) {
    case "agentMessage":
      return phase === "completed"
        ? { type: "agent.message", payload: { text: item.text, ...optional("phase", item.phase) } }
        : undefined
    case "commandExecution":
      return {
        type,
        payload: {
          type: "commandExecution",
          command: redaction.command(item.command),
          cwd: relativeCwd(redaction, item.cwd),
          status: item.status,
          ...optional("exit_code", item.exitCode)
        }
      }
    case "fileChange":
      return {
        type,
        payload: {
          type: "fileChange",
          status: item.status,
          changes: item.changes.map((c) => ({ path: redaction.path(c.path), kind: c.kind.type }))
        }
      }
    case "userMessage":
    case "reasoning":
    case "hookPrompt":
    case "plan":
      return undefined
    default:
      return {
        type,
        payload: {
          type: item.type,
          ...("status" in item && typeof item.status === "string" ? { status: item.status } : {})
        }
      }
  }
}

// ---- failures ----------------------------------------------------------------------------------
/**
 * A request Codex did not answer as asked, as the task's error. Codex's own text (which names
 * the workdir, CODEX_HOME, temp files) is redacted by the one rule before it is quoted.
 */
export const requestFailure = (
  redaction: HostPathRedaction,
  what: string,
  error: RequestError
): AgentError =>
  error._tag === "CodexDisconnected"
    ? new AgentProviderDisconnected({ message: `the connection to Codex was lost during ${what}` })
    : error._tag === "CodexTimeout"
      ? new AgentProviderError({ message: `Codex did not answer ${what} in time` })
      : new AgentProviderError({ message: redaction.message(`Codex refused ${what}: ${error.message}`) })

/** A failed turn (Codex's error text, or the last `error` notification's), redacted. */
export const turnFailure = (redaction: HostPathRedaction, text: string): AgentProviderError =>
  new AgentProviderError({ message: redaction.message(text) })
