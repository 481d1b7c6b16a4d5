import * as path from "node:path"
import {
  type ApprovalPayload,
  type ApprovalResolution,
  Decision,
  type Question,
  type QuestionPayload,
  type QuestionResolution
} from "@serverfs/domain"
import type { NormalizedEvent } from "../ProviderAdapter.js"
import type {
  CommandExecutionApprovalDecision,
  CommandExecutionRequestApprovalParams,
  FileChangeRequestApprovalParams,
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
 * replies built from the human's answers, progress events built from thread items, and the
 * host-path hygiene of everything shown. Nothing here talks to Codex.
 */
const OUTSIDE_WORKDIR = "<outside-workdir>"
const WORKDIR_TEXT = "<workdir>"

const trimSlash = (p: string): string => (p.length > 1 ? p.replace(/\/+$/, "") : p)

/** A host path as a chat may see it: workdir-relative, "." for the root, else `<outside-workdir>`. */
export const displayPath = (workdirRoot: string, value: string): string => {
  if (!path.isAbsolute(value)) return value
  const root = trimSlash(workdirRoot)
  const clean = trimSlash(path.normalize(value))
  if (clean === root) return "."
  if (root !== "/" && clean.startsWith(`${root}/`)) return clean.slice(root.length + 1)
  return OUTSIDE_WORKDIR
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A command line for display: every occurrence of the workdir root, as a whole path component,
 * becomes workdir-relative (`<root>/src/a.ts` → `src/a.ts`, `<root>` → `.`). Other text is kept:
 * commands are shown for an informed decision (spec §16).
 */
export const redactCommand = (workdirRoot: string, command: string): string => {
  const root = trimSlash(workdirRoot)
  if (root === "/" || root === "") return command
  const pattern = new RegExp(`${escapeRegExp(root)}(/[^\\s'"\`;|&<>()]*)?(?![^\\s'"\`;|&<>()/])`, "g")
  return command.replace(pattern, (_match, rest: string | undefined) => {
    const tail = (rest ?? "").replace(/^\/+/, "")
    return tail === "" ? "." : tail
  })
}

/** Path-valued keys whose strings are host paths (also inside lists). */
const PATH_KEYS = new Set(["path", "cwd", "grantRoot", "read", "write", "readableRoots", "writableRoots"])

/** Native provider data with every host path under a path key shown as `displayPath`. */
const redactPaths = (workdirRoot: string, value: unknown, key?: string): unknown => {
  if (typeof value === "string")
    return key !== undefined && PATH_KEYS.has(key) ? displayPath(workdirRoot, value) : value
  if (Array.isArray(value)) return value.map((v) => redactPaths(workdirRoot, v, key))
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      out[k] = redactPaths(workdirRoot, v, k)
    return out
  }
  return value
}

/**
 * A provider message safe to store as a task error: the workdir root becomes `<workdir>`, any
 * other absolute path `<path>`, and it is bounded.
 */
export const scrubMessage = (workdirRoot: string, message: string, max = 2000): string => {
  const root = trimSlash(workdirRoot)
  const withoutRoot = root === "/" || root === "" ? message : message.split(root).join(WORKDIR_TEXT)
  const withoutPaths = withoutRoot.replace(
    /(^|[\s'"(=[,])\/[^\s'")\],]+/g,
    (_m, lead: string) => `${lead}<path>`
  )
  return withoutPaths.length > max ? `${withoutPaths.slice(0, max)}…` : withoutPaths
}

// ---- decisions --------------------------------------------------------------------------------
type NativeDecision = "accept" | "acceptForSession" | "decline" | "cancel"

const DEFAULT_DECISIONS: ReadonlyArray<Decision> = ["approve_once", "deny", "cancel_task"]

const FROM_NATIVE: Readonly<Record<string, Decision>> = {
  accept: "approve_once",
  acceptForSession: "approve_session",
  decline: "deny",
  cancel: "cancel_task"
}

/**
 * The decisions offered for a Codex approval, translated back from `availableDecisions`
 * (accept→approve_once, acceptForSession→approve_session, decline→deny, cancel→cancel_task).
 * Amendment decisions (`acceptWithExecpolicyAmendment`, `applyNetworkPolicyAmendment`) are
 * never offered: they would persist rules into the user's Codex configuration. Absent, or
 * nothing translatable: [approve_once, deny, cancel_task].
 */
export const decisionsFrom = (
  available: ReadonlyArray<CommandExecutionApprovalDecision> | null | undefined
): ReadonlyArray<Decision> => {
  if (available === null || available === undefined) return DEFAULT_DECISIONS
  const offered = new Set<Decision>()
  for (const d of available) {
    if (typeof d === "string") {
      const mapped = FROM_NATIVE[d]
      if (mapped !== undefined) offered.add(mapped)
    }
  }
  return offered.size === 0 ? DEFAULT_DECISIONS : Decision.literals.filter((d) => offered.has(d))
}

/** approve_once→accept, approve_session→acceptForSession, deny→decline, cancel_task→cancel. */
export const nativeDecision = (decision: string): NativeDecision => {
  switch (decision) {
    case "approve_once":
      return "accept"
    case "approve_session":
      return "acceptForSession"
    case "cancel_task":
      return "cancel"
    default:
      return "decline"
  }
}

// ---- approvals --------------------------------------------------------------------------------
const optional = <K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } =>
  (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

export const commandApproval = (
  params: CommandExecutionRequestApprovalParams,
  workdirRoot: string
): ApprovalPayload => {
  const command = params.command ?? (params.commandActions ?? []).map((a) => a.command).join(" && ")
  return {
    category: "command",
    title: "Codex wants to run a command",
    available_decisions: [...decisionsFrom(params.availableDecisions)],
    ...optional("reason", params.reason),
    command_display: redactCommand(workdirRoot, command),
    ...optional(
      "relative_cwd",
      params.cwd === null || params.cwd === undefined ? undefined : displayPath(workdirRoot, params.cwd)
    ),
    ...optional(
      "additional_permissions",
      params.additionalPermissions === null || params.additionalPermissions === undefined
        ? undefined
        : redactPaths(workdirRoot, params.additionalPermissions)
    ),
    ...optional("network_approval_context", params.networkApprovalContext)
  }
}

export const fileChangeApproval = (
  params: FileChangeRequestApprovalParams,
  changedPaths: ReadonlyArray<string>,
  workdirRoot: string
): ApprovalPayload => {
  const paths =
    changedPaths.length > 0
      ? changedPaths
      : params.grantRoot === null || params.grantRoot === undefined
        ? []
        : [params.grantRoot]
  return {
    category: "file_change",
    title: "Codex wants to change files",
    available_decisions: [...DEFAULT_DECISIONS],
    ...optional("reason", params.reason),
    file_changes: [...new Set(paths.map((p) => displayPath(workdirRoot, p)))].map((p) => ({ path: p }))
  }
}

const permissionKind = (key: string): string =>
  key === "fileSystem" ? "file_system" : key === "network" ? "network" : key

/** The top-level permission categories Codex asked for (those with a value). */
const requestedPermissionIds = (params: PermissionsRequestApprovalParams): ReadonlyArray<string> =>
  Object.entries(params.permissions as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k]) => k)

export const permissionApproval = (
  params: PermissionsRequestApprovalParams,
  workdirRoot: string
): ApprovalPayload => {
  const native = params.permissions as Record<string, unknown>
  return {
    category: "provider_permission",
    title: "Codex asks for additional permissions",
    available_decisions: [...Decision.literals],
    ...optional("reason", params.reason),
    relative_cwd: displayPath(workdirRoot, params.cwd),
    requested_permissions: requestedPermissionIds(params).map((id) => ({
      permission_id: id,
      kind: permissionKind(id),
      details: redactPaths(workdirRoot, native[id])
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
  workdirRoot: string
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
          command: redactCommand(workdirRoot, item.command),
          cwd: displayPath(workdirRoot, item.cwd),
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
          changes: item.changes.map((c) => ({ path: displayPath(workdirRoot, c.path), kind: c.kind.type }))
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
