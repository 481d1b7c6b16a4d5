import type { PendingRequestView, TaskView } from "@serverfs/domain"

/**
 * What `serverfs tasks show` prints of a task (its JSON contract, and the source of the human
 * rendering): the task's state and times, its error code, a summary of its pending request and
 * of its manifest. Left out on purpose — they are caller or provider text, or identify the
 * caller: the correlation id, the idempotency key, the requested model, the relative cwd (a
 * path), the final response, the error message, the pending request's titles, commands, file
 * paths and questions. `serverfs-mcp`'s task tools remain the way to read those.
 */
export interface PendingSummary {
  readonly request_id: string
  readonly kind: PendingRequestView["kind"]
  readonly status: PendingRequestView["status"]
  /** An approval's category (command, file_change, …); null for a question. */
  readonly category: string | null
  /** How many questions a question request asks; null for an approval. */
  readonly questions: number | null
  readonly created_at: string
  readonly expires_at: string
}

export interface ManifestSummary {
  readonly bridge_version: string
  readonly runtime: string
  readonly runtime_version: string | null
  readonly in_flight_recovery: string
  readonly workdir_alias: string
  readonly workdir_slot: number
  readonly profile: string
  readonly read_only: boolean
  readonly agent_mode: string
  readonly continue_from_task_id: string | null
  readonly limits: Readonly<Record<string, number>>
}

export interface TaskSummaryJson {
  readonly task_id: string
  readonly status: TaskView["status"]
  readonly runtime: string
  readonly workdir_alias: string
  readonly workdir_slot: number
  readonly profile: string
  readonly created_at: string
  readonly started_at: string | null
  readonly updated_at: string
  readonly completed_at: string | null
  readonly deadline_at: string
  readonly error_code: string | null
  readonly result: {
    readonly storage: string
    readonly size_bytes: number
    readonly retrievable: boolean
  } | null
  readonly pending_request: PendingSummary | null
  readonly manifest: ManifestSummary
}

const pendingSummary = (request: PendingRequestView): PendingSummary => ({
  request_id: request.request_id,
  kind: request.kind,
  status: request.status,
  category: "category" in request.payload ? request.payload.category : null,
  questions: "questions" in request.payload ? request.payload.questions.length : null,
  created_at: request.created_at,
  expires_at: request.expires_at
})

export const taskSummary = (view: TaskView): TaskSummaryJson => ({
  task_id: view.task_id,
  status: view.status,
  runtime: view.runtime,
  workdir_alias: view.workdir_alias,
  workdir_slot: view.workdir_slot,
  profile: view.profile,
  created_at: view.created_at,
  started_at: view.started_at,
  updated_at: view.updated_at,
  completed_at: view.completed_at,
  deadline_at: view.deadline_at,
  error_code: view.error_code,
  result:
    view.result === null
      ? null
      : {
          storage: view.result.storage,
          size_bytes: view.result.size_bytes,
          retrievable: view.result.retrievable
        },
  pending_request: view.pending_request === undefined ? null : pendingSummary(view.pending_request),
  manifest: {
    bridge_version: view.manifest.bridge_version,
    runtime: view.manifest.runtime.name,
    runtime_version: view.manifest.runtime.version,
    in_flight_recovery: view.manifest.runtime.in_flight_recovery,
    workdir_alias: view.manifest.workspace.alias,
    workdir_slot: view.manifest.workspace.slot,
    profile: view.manifest.workspace.profile,
    read_only: view.manifest.policy.read_only,
    agent_mode: view.manifest.policy.agent_mode,
    continue_from_task_id: view.manifest.continuation.from_task_id,
    limits: view.manifest.limits
  }
})
