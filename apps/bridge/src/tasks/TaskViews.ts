import { Manifest, PendingRequestView, type TaskView } from "@serverfs/domain"
import type { PendingRequestRecord, TaskRecord } from "@serverfs/store"
import { Effect, Schema } from "effect"

/**
 * The client's view of a task (bridge-internals §6 "Task view"): the stored record without the
 * native ids and the request fingerprint; the result summarised; the pending request inline.
 * JSON columns are decoded with their schemas, the manifest checked with its own (what a schema
 * does not name is kept); a row this process wrote that does not pass is a defect, never a
 * client error.
 */
const keep = { onExcessProperty: "preserve" } as const
const isManifest = Schema.is(Manifest)
/**
 * The manifest is checked rather than decoded: its schema has no transformations, so a parsed
 * value that passes `Schema.is` is what the decode returns (unnamed keys kept either way), at
 * about a third of the cost: a task.get allocates 14 % less (issue 12, docs/performance.md).
 */
const storedManifest = (json: string): Effect.Effect<Manifest> =>
  Effect.suspend(() => {
    let value: unknown
    try {
      value = JSON.parse(json)
    } catch {
      return Effect.dieMessage("a stored manifest is not JSON")
    }
    return isManifest(value) ? Effect.succeed(value) : Effect.dieMessage("a stored manifest fails its schema")
  })
const decodePayload = Schema.decodeUnknown(Schema.parseJson(PendingRequestView.fields.payload), keep)
const decodeResolution = Schema.decodeUnknown(Schema.parseJson(PendingRequestView.fields.resolution), keep)

export const pendingRequestView = (record: PendingRequestRecord): Effect.Effect<PendingRequestView> =>
  Effect.gen(function* () {
    return {
      request_id: record.request_id,
      task_id: record.task_id,
      kind: record.kind,
      status: record.status,
      payload: yield* decodePayload(record.payload_json),
      created_at: record.created_at,
      expires_at: record.expires_at,
      resolved_at: record.resolved_at,
      resolution: record.resolution_json === null ? null : yield* decodeResolution(record.resolution_json)
    }
  }).pipe(Effect.orDie)

export const taskView = (
  task: TaskRecord,
  pending: PendingRequestRecord | undefined
): Effect.Effect<TaskView> =>
  Effect.gen(function* () {
    const view: TaskView = {
      task_id: task.task_id,
      runtime: task.runtime,
      workdir_alias: task.workdir_alias,
      workdir_slot: task.workdir_slot,
      relative_cwd: task.relative_cwd,
      profile: task.profile,
      status: task.status,
      created_at: task.created_at,
      started_at: task.started_at,
      updated_at: task.updated_at,
      completed_at: task.completed_at,
      deadline_at: task.deadline_at,
      continue_from_task_id: task.continue_from_task_id,
      correlation_id: task.correlation_id,
      idempotency_key: task.idempotency_key,
      requested_model: task.requested_model,
      final_response: task.final_response,
      final_response_truncated: task.result_storage === "spool",
      result:
        task.result_storage === null || task.result_size_bytes === null || task.result_sha256 === null
          ? null
          : {
              storage: task.result_storage,
              size_bytes: task.result_size_bytes,
              sha256: task.result_sha256,
              retrievable: task.result_storage === "spool"
            },
      manifest: yield* storedManifest(task.manifest_json),
      manifest_sha256: task.manifest_sha256,
      error_code: task.error_code,
      error_message: task.error_message,
      pending_request_id: task.pending_request_id
    }
    return pending === undefined ? view : { ...view, pending_request: yield* pendingRequestView(pending) }
  }).pipe(Effect.orDie)
