/**
 * The database schema (bridge-internals §5): migrations from an empty file, idempotent reopen,
 * connection settings, cascades and the immutable identity/manifest columns.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { canonicalJson, sha256Hex } from "@serverfs/domain"
import { Effect, Exit, Option } from "effect"
import { MIGRATIONS_TABLE, migrations, TaskStore } from "../src/index.js"
import {
  eventLimits,
  insertQueued,
  insertRunning,
  interaction,
  manifestFor,
  rawRows,
  scopedTempState,
  withRawSql,
  withStore
} from "./helpers.js"

const columnsOf = (table: string) =>
  Effect.map(rawRows(`PRAGMA table_info(${table})`), (rows) => rows.map((row) => row.name))

const TASK_COLUMNS = [
  "task_id",
  "runtime",
  "workdir_alias",
  "workdir_slot",
  "relative_cwd",
  "profile",
  "status",
  "created_at",
  "started_at",
  "updated_at",
  "completed_at",
  "deadline_at",
  "continue_from_task_id",
  "correlation_id",
  "idempotency_key",
  "request_fingerprint",
  "requested_model",
  "native_session_id",
  "native_turn_id",
  "final_response",
  "result_storage",
  "result_size_bytes",
  "result_sha256",
  "manifest_json",
  "manifest_sha256",
  "error_code",
  "error_message",
  "pending_request_id",
  "event_count",
  "stored_bytes"
]

describe("migrations", () => {
  it.scoped("an empty state directory gets the full schema of §5", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        yield* withStore(temp.stateDir, Effect.void)
        yield* withRawSql(
          temp.stateDir,
          Effect.gen(function* () {
            expect(yield* columnsOf("tasks")).toEqual(TASK_COLUMNS)
            expect(yield* columnsOf("events")).toEqual([
              "event_id",
              "task_id",
              "event_type",
              "payload_json",
              "created_at"
            ])
            expect(yield* columnsOf("pending_requests")).toEqual([
              "request_id",
              "task_id",
              "kind",
              "status",
              "payload_json",
              "created_at",
              "expires_at",
              "resolved_at",
              "resolution_json"
            ])
            const indexes = yield* rawRows(
              "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
            )
            const byName = Object.fromEntries(indexes.map((row) => [row.name, String(row.sql)]))
            expect(byName.tasks_idempotency_key).toMatch(
              /UNIQUE INDEX .*\(idempotency_key\) WHERE idempotency_key IS NOT NULL/
            )
            expect(byName.events_task_event).toMatch(/\(task_id, event_id\)/)
            expect(byName.pending_requests_task_status).toMatch(/\(task_id, status\)/)
            const events = yield* rawRows("SELECT sql FROM sqlite_master WHERE name = 'events'")
            expect(String(events[0]?.sql)).toMatch(/event_id INTEGER PRIMARY KEY AUTOINCREMENT/)
            for (const table of ["events", "pending_requests"]) {
              const fks = yield* rawRows(`PRAGMA foreign_key_list(${table})`)
              expect(fks).toHaveLength(1)
              expect(fks[0]).toMatchObject({
                table: "tasks",
                from: "task_id",
                to: "task_id",
                on_delete: "CASCADE"
              })
            }
            const applied = yield* rawRows(`SELECT migration_id, name FROM ${MIGRATIONS_TABLE}`)
            expect(applied).toEqual([
              { migration_id: 1, name: "initial" },
              { migration_id: 2, name: "stored_bytes" },
              { migration_id: 3, name: "task_listing" },
              { migration_id: 4, name: "storage_totals" }
            ])
            const mode = yield* rawRows("PRAGMA journal_mode")
            expect(mode[0]?.journal_mode).toBe("wal")
          })
        )
      })
    )
  )

  it.scoped("reopening keeps the data and applies no migration twice", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const taskId = yield* withStore(temp.stateDir, insertRunning({ correlation_id: "corr-1" }))
        for (let round = 0; round < 3; round++) {
          const task = yield* withStore(
            temp.stateDir,
            Effect.flatMap(TaskStore, (store) => store.getTask(taskId))
          )
          expect(Option.map(task, (t) => [t.status, t.correlation_id])).toEqual(
            Option.some(["running", "corr-1"])
          )
        }
        const applied = yield* withRawSql(
          temp.stateDir,
          rawRows(`SELECT migration_id FROM ${MIGRATIONS_TABLE}`)
        )
        expect(applied).toHaveLength(Object.keys(migrations).length)
      })
    )
  )

  it.scoped("the stored manifest is canonical JSON and its SHA-256 verifies", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const manifest = manifestFor({ correlation_id: "c", limits: { b: 2, a: 1 } })
          const taskId = yield* insertQueued({ manifest })
          const task = Option.getOrThrow(yield* store.getTask(taskId))
          expect(task.manifest_json).toBe(canonicalJson(manifest))
          expect(task.manifest_json.indexOf('"a":1')).toBeLessThan(task.manifest_json.indexOf('"b":2'))
          expect(task.manifest_sha256).toBe(sha256Hex(task.manifest_json))
          expect(JSON.parse(task.manifest_json)).toEqual(manifest)
        })
      )
    )
  )
})

describe("connection rules", () => {
  it.scoped("foreign keys are on: deleting a task row (GC) cascades to its events and requests", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const taskId = yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const id = yield* insertRunning()
            yield* store.appendEvent(id, "turn.started", {}, eventLimits)
            yield* store.createPendingRequest(
              id,
              "question",
              { questions: [] },
              "2099-01-01T00:00:00Z",
              interaction
            )
            return id
          })
        )
        // The cascade only happens on a connection with foreign_keys ON: the store's.
        const counts = yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            yield* store.transition(taskId, "cancelled")
            const deleted = yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: 0 })
            expect(deleted).toEqual([taskId])
            return yield* withRawSql(
              temp.stateDir,
              Effect.all([
                rawRows(`SELECT COUNT(*) AS n FROM events WHERE task_id = '${taskId}'`),
                rawRows(`SELECT COUNT(*) AS n FROM pending_requests WHERE task_id = '${taskId}'`)
              ])
            )
          })
        )
        expect(counts.map((rows) => rows[0]?.n)).toEqual([0, 0])
      })
    )
  )

  it.scoped("identity columns and the manifest cannot be rewritten, even by raw SQL", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const taskId = yield* withStore(temp.stateDir, insertQueued())
        for (const column of [
          "manifest_json",
          "manifest_sha256",
          "correlation_id",
          "deadline_at",
          "task_id"
        ]) {
          const exit = yield* Effect.exit(
            withRawSql(temp.stateDir, rawRows(`UPDATE tasks SET ${column} = 'x' WHERE task_id = '${taskId}'`))
          )
          expect(Exit.isFailure(exit)).toBe(true)
          expect(JSON.stringify(Exit.isFailure(exit) ? exit.cause : null)).toMatch(
            /SQLITE_CONSTRAINT_TRIGGER/
          )
        }
        const task = yield* withStore(
          temp.stateDir,
          Effect.flatMap(TaskStore, (store) => store.getTask(taskId))
        )
        expect(
          Option.map(task, (t) => [
            t.task_id,
            t.correlation_id,
            t.manifest_sha256 === sha256Hex(t.manifest_json)
          ])
        ).toEqual(Option.some([taskId, null, true]))
      })
    )
  )

  it.scoped("the database is <stateDir>/state.sqlite3, open (with its WAL) in scope and closed after", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const db = path.join(temp.stateDir, "state.sqlite3")
        yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            yield* insertQueued()
            expect(fs.lstatSync(db).isFile()).toBe(true)
            expect(fs.existsSync(`${db}-wal`)).toBe(true)
          })
        )
        // The last connection closing checkpoints and removes the WAL: the scope closed the handle.
        expect(fs.existsSync(`${db}-wal`)).toBe(false)
        expect(fs.readdirSync(temp.stateDir)).toEqual(["state.sqlite3"])
      })
    )
  )
})
