/**
 * The task view's manifest (bridge-internals §6 "Task view"): the stored column, checked with
 * the manifest's schema rather than decoded (issue 12). What the schema does not name is kept,
 * as the decode kept it; a stored manifest that is not JSON or fails the schema is a defect —
 * a row this process wrote — never a client error. The record is a real one, planted and read
 * back through the store; only its manifest column is varied.
 */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { canonicalJson, Manifest } from "@serverfs/domain"
import { type TaskRecord, TaskStore } from "@serverfs/store"
import { scopedTempTree } from "@serverfs/testkit"
import { Cause, Effect, Exit, Option, Schema, type Scope } from "effect"
import { taskView } from "../src/index.js"
import { plantTask } from "./support/store.js"

/** A running task as the store keeps it. */
const storedRunningTask: Effect.Effect<TaskRecord, unknown, Scope.Scope> = Effect.gen(function* () {
  const stateDir = path.join((yield* scopedTempTree("serverfs-views-")).base, "state")
  const taskId = yield* Effect.promise(() =>
    plantTask(stateDir, { status: "running", workdirAlias: "wd", slot: 1, profile: "review" })
  )
  return yield* Effect.provide(
    Effect.flatMap(TaskStore, (store) => Effect.map(store.getTask(taskId), Option.getOrThrow)),
    TaskStore.layer({ stateDir })
  )
})

const decodedAsBefore = Schema.decodeUnknownSync(Schema.parseJson(Manifest), { onExcessProperty: "preserve" })

describe("the task view's manifest", () => {
  it.scoped("is the stored manifest, as the schema's decode returns it, unnamed keys kept", () =>
    Effect.gen(function* () {
      const task = yield* storedRunningTask
      const manifest = decodedAsBefore(task.manifest_json)
      expect((yield* taskView(task, undefined)).manifest).toEqual(manifest)
      const later = canonicalJson({ ...manifest, later_field: { kept: true } })
      const view = yield* taskView({ ...task, manifest_json: later }, undefined)
      expect(view.manifest).toEqual(decodedAsBefore(later))
      expect(view.manifest).toEqual({ ...manifest, later_field: { kept: true } })
    })
  )

  it.scoped("a stored manifest that is not JSON, or fails the schema, is a defect", () =>
    Effect.gen(function* () {
      const task = yield* storedRunningTask
      const manifest = decodedAsBefore(task.manifest_json)
      const { deadline_at: _, ...withoutDeadline } = manifest
      const broken = [
        "{",
        canonicalJson({ ...manifest, schema_version: 3 }),
        canonicalJson({ ...manifest, runtime: { ...manifest.runtime, in_flight_recovery: "sometimes" } }),
        canonicalJson({ ...manifest, limits: { max_active_tasks: "4" } }),
        canonicalJson(withoutDeadline),
        "[]",
        "null"
      ]
      for (const stored of broken) {
        const exit = yield* Effect.exit(taskView({ ...task, manifest_json: stored }, undefined))
        expect(Exit.isFailure(exit) && Cause.isDieType(exit.cause)).toBe(true)
      }
    })
  )
})
