import type { CancelResult, TaskListResult, TaskStatus } from "@serverfs/domain"
import type { StyleService } from "../output/Style.js"
import { renderFields, renderTable } from "../output/Table.js"
import type { TaskSummaryJson } from "./TaskSummary.js"

/** Human renderings of the task commands (their JSON is the bridge's or TaskSummary's). */
export const styleStatus = (style: StyleService, status: TaskStatus): string => {
  switch (status) {
    case "succeeded":
      return style.ok(status)
    case "failed":
    case "interrupted":
      return style.fail(status)
    case "waiting_for_approval":
    case "waiting_for_question":
      return style.warn(status)
    default:
      return status
  }
}

const orDash = (value: string | number | null): string => (value === null ? "-" : String(value))

export const renderTaskList = (style: StyleService, result: TaskListResult): string => {
  if (result.tasks.length === 0) return "no tasks"
  const table = renderTable(result.tasks, [
    { header: "TASK", cell: (t) => t.task_id },
    { header: "STATUS", cell: (t) => t.status },
    { header: "RUNTIME", cell: (t) => t.runtime },
    { header: "WORKDIR", cell: (t) => t.workdir_alias },
    { header: "PROFILE", cell: (t) => t.profile },
    { header: "CREATED", cell: (t) => t.created_at },
    { header: "ERROR", cell: (t) => orDash(t.error_code) }
  ])
  // Colour after alignment: escape codes have no width.
  const lines = table.split("\n").map((line, i) => {
    const task = i === 0 ? undefined : result.tasks[i - 1]
    return task === undefined
      ? line
      : line.replace(` ${task.status} `, ` ${styleStatus(style, task.status)} `)
  })
  if (result.truncated) lines.push(style.dim("(more tasks match: narrow the filters or raise --limit)"))
  return lines.join("\n")
}

export const renderTaskSummary = (style: StyleService, task: TaskSummaryJson): string => {
  const fields: Array<readonly [string, string]> = [
    ["task", task.task_id],
    ["status", task.status],
    ["runtime", `${task.manifest.runtime} ${orDash(task.manifest.runtime_version)}`],
    ["workdir", `${task.workdir_alias} (slot ${task.workdir_slot})`],
    ["profile", task.profile],
    ["created", task.created_at],
    ["started", orDash(task.started_at)],
    ["updated", task.updated_at],
    ["completed", orDash(task.completed_at)],
    ["deadline", task.deadline_at],
    ["error", orDash(task.error_code)],
    [
      "result",
      task.result === null
        ? "-"
        : `${task.result.size_bytes} bytes (${task.result.storage}${task.result.retrievable ? "" : ", no longer retrievable"})`
    ],
    [
      "pending",
      task.pending_request === null
        ? "-"
        : `${task.pending_request.kind} ${task.pending_request.request_id} (${task.pending_request.category ?? `${task.pending_request.questions} question(s)`}), expires ${task.pending_request.expires_at}`
    ],
    [
      "manifest",
      `bridge ${task.manifest.bridge_version}, ${task.manifest.agent_mode}${task.manifest.read_only ? ", read-only" : ""}, recovery ${task.manifest.in_flight_recovery}` +
        (task.manifest.continue_from_task_id === null
          ? ""
          : `, continues ${task.manifest.continue_from_task_id}`)
    ]
  ]
  const text = renderFields(fields)
  return text.replace(/^(status:\s+)(\S+)$/m, (_, key: string) => `${key}${styleStatus(style, task.status)}`)
}

export const renderCancel = (result: CancelResult): string => `${result.task_id}: ${result.status}`
