/**
 * The task view's manifest (bridge-internals §6 "Task view"): the stored column, checked with
 * the manifest's schema rather than decoded (issue 12). What the schema does not name is kept,
 * as the decode kept it; a stored manifest that is not JSON or fails the schema is a defect —
 * a row this process wrote — never a client error.
 */
import { describe, expect, it } from "@effect/vitest"
import { canonicalJson, Manifest } from "@serverfs/domain"
import type { TaskRecord } from "@serverfs/store"
import { Cause, Effect, Exit, Schema } from "effect"
import { taskView } from "../src/index.js"

const manifest: Manifest = {
  schema_version: 2,
  bridge_version: "0.1.0-test",
  protocol_version: 1,
  runtime: { name: "fake", version: null, in_flight_recovery: "none" },
  workspace: { alias: "wd", slot: 1, relative_cwd: ".", profile: "review" },
  policy: { read_only: false, agent_mode: "review", policy_sha256: "0".repeat(64) },
  model: { requested: null },
  limits: { max_active_tasks: 4 },
  continuation: { from_task_id: null },
  correlation_id: null,
  idempotency_key: null,
  deadline_at: "2100-01-01T00:00:00.000Z"
}

const record = (manifestJson: string): TaskRecord => ({
  task_id: `agt_${"1".repeat(24)}`,
  runtime: "fake",
  workdir_alias: "wd",
  workdir_slot: 1,
  relative_cwd: ".",
  profile: "review",
  status: "running",
  created_at: "2026-12-03T00:00:00.000Z",
  started_at: "2026-12-03T00:00:00.001Z",
  updated_at: "2026-12-03T00:00:00.001Z",
  completed_at: null,
  deadline_at: "2100-01-01T00:00:00.000Z",
  continue_from_task_id: null,
  correlation_id: null,
  idempotency_key: null,
  request_fingerprint: "f".repeat(64),
  requested_model: null,
  native_session_id: null,
  native_turn_id: null,
  final_response: null,
  result_storage: null,
  result_size_bytes: null,
  result_sha256: null,
  manifest_json: manifestJson,
  manifest_sha256: "0".repeat(64),
  error_code: null,
  error_message: null,
  pending_request_id: null,
  event_count: 0
})

const decodedAsBefore = Schema.decodeUnknownSync(Schema.parseJson(Manifest), { onExcessProperty: "preserve" })

describe("the task view's manifest", () => {
  it.effect("is the stored manifest, as the schema's decode returns it, unnamed keys kept", () =>
    Effect.gen(function* () {
      const stored = canonicalJson({ ...manifest, later_field: { kept: true } })
      const view = yield* taskView(record(stored), undefined)
      expect(view.manifest).toEqual(decodedAsBefore(stored))
      expect(view.manifest).toEqual({ ...manifest, later_field: { kept: true } })
    })
  )

  it.effect("a stored manifest that is not JSON, or fails the schema, is a defect", () =>
    Effect.gen(function* () {
      const broken = [
        "{",
        canonicalJson({ ...manifest, schema_version: 3 }),
        canonicalJson({ ...manifest, runtime: { ...manifest.runtime, in_flight_recovery: "sometimes" } }),
        canonicalJson({ ...manifest, limits: { max_active_tasks: "4" } }),
        canonicalJson((({ deadline_at: _, ...rest }) => rest)(manifest)),
        "[]",
        "null"
      ]
      for (const stored of broken) {
        const exit = yield* Effect.exit(taskView(record(stored), undefined))
        expect(Exit.isFailure(exit) && Cause.isDieType(exit.cause)).toBe(true)
      }
    })
  )
})
