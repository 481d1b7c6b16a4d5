import {
  CATALOG_VERSION,
  DIAGNOSTIC_LIMITS,
  type DiagnosticsSnapshot,
  type DiagnosticsTaskResult,
  type NotRetainedReason,
  type RecorderState,
  type TaskStatus
} from "@serverfs/domain"
import type { TraceLookup } from "./DiagnosticsRecorder.js"

/**
 * `diagnostics.snapshot` (spec v0.22 §8.1) from the recorder's state: aggregates and the frozen
 * limits only. `durableTasksPredate` is the store's answer to "does any durable task predate
 * this generation?", which the recorder cannot know.
 */
export const diagnosticsSnapshotOf = (
  state: RecorderState,
  durableTasksPredate: boolean
): DiagnosticsSnapshot => ({
  catalog_version: CATALOG_VERSION,
  limits: {
    max_records: DIAGNOSTIC_LIMITS.maxRecords,
    max_bytes: DIAGNOSTIC_LIMITS.maxBytes,
    max_task_records: DIAGNOSTIC_LIMITS.maxTaskRecords,
    max_task_bytes: DIAGNOSTIC_LIMITS.maxTaskBytes,
    max_operation_bytes: DIAGNOSTIC_LIMITS.maxOperationBytes,
    seal_reserved_bytes: DIAGNOSTIC_LIMITS.sealReservedBytes
  },
  ...state,
  durable_tasks_predate_generation: durableTasksPredate
})

/** What the durable store says of the task id a `diagnostics.task` asks about. */
export type DurableTask =
  | { readonly _tag: "Unknown" }
  /** `createdBeforeGeneration`: the task was created before this bridge process started. */
  | { readonly _tag: "Known"; readonly status: TaskStatus; readonly createdBeforeGeneration: boolean }

/**
 * `diagnostics.task` (§8.2): the store decides `unknown_task`; the recorder decides `available`;
 * otherwise `not_retained` with the recorder's reason, or `bridge_restarted` when the task
 * predates this generation, or no reason at all when neither can be established (never a guess).
 */
export const diagnosticsTaskResultOf = (
  taskId: string,
  durable: DurableTask,
  lookup: TraceLookup
): DiagnosticsTaskResult => {
  if (durable._tag === "Unknown") {
    return { catalog_version: CATALOG_VERSION, disposition: "unknown_task", task_id: taskId }
  }
  if (lookup._tag === "Retained") {
    return {
      catalog_version: CATALOG_VERSION,
      disposition: "available",
      task_id: taskId,
      status: durable.status,
      ...lookup.trace
    }
  }
  const reason: NotRetainedReason | undefined =
    lookup.reason ?? (durable.createdBeforeGeneration ? "bridge_restarted" : undefined)
  return reason === undefined
    ? { catalog_version: CATALOG_VERSION, disposition: "not_retained", task_id: taskId }
    : { catalog_version: CATALOG_VERSION, disposition: "not_retained", task_id: taskId, reason }
}
