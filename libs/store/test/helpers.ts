/** Shared fixtures: temp state directories, task inputs, and the store on real files. */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { Manifest } from "@serverfs/domain"
import { Effect, Exit, Layer, type Scope } from "effect"
import { makeTaskId, type NewTask, type ResultSpool, TaskStore } from "../src/index.js"

export const LIMITS = {
  maxActiveTasks: 1_000,
  maxEventsPerTask: 10_000,
  maxEventBytes: 65_536,
  maxInteractionBytes: 65_536
} as const

export const eventLimits = { maxEventsPerTask: LIMITS.maxEventsPerTask, maxEventBytes: LIMITS.maxEventBytes }
export const active = { maxActiveTasks: LIMITS.maxActiveTasks }
export const interaction = { maxInteractionBytes: LIMITS.maxInteractionBytes }

/** A fresh base directory (mkdtemp, 0700) whose `state` child does not exist yet. */
export interface TempState {
  readonly base: string
  readonly stateDir: string
  readonly remove: () => void
}

export const makeTempState = (): TempState => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-store-"))
  return {
    base,
    stateDir: path.join(base, "state"),
    remove: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

/** A fresh temp state for one test, removed by the test's Scope however it ends (`it.scoped`). */
export const scopedTempState: Effect.Effect<TempState, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(makeTempState),
  (temp) => Effect.sync(temp.remove)
)

export const modeOf = (p: string): number => fs.lstatSync(p).mode & 0o7777

export const manifestFor = (overrides: Partial<Manifest> = {}): Manifest => ({
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
  deadline_at: "2100-01-01T00:00:00.000Z",
  ...overrides
})

export const newTask = (overrides: Partial<NewTask> = {}): Effect.Effect<NewTask> =>
  Effect.map(makeTaskId, (task_id) => ({
    task_id,
    runtime: "fake",
    workdir_alias: "wd",
    workdir_slot: 1,
    relative_cwd: ".",
    profile: "review",
    deadline_at: "2100-01-01T00:00:00.000Z",
    continue_from_task_id: null,
    correlation_id: null,
    idempotency_key: null,
    request_fingerprint: "f".repeat(64),
    requested_model: null,
    manifest: manifestFor(),
    ...overrides
  }))

/** Inserts a queued task (deadline far away) and returns its id. */
export const insertQueued = (overrides: Partial<NewTask> = {}) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const task = yield* newTask(overrides)
    yield* store.insertTask(task, active)
    return task.task_id
  })

/** Inserts a task and drives it to running. */
export const insertRunning = (overrides: Partial<NewTask> = {}) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const taskId = yield* insertQueued(overrides)
    yield* store.transition(taskId, "starting")
    yield* store.transition(taskId, "running")
    return taskId
  })

/** Runs `effect` against the store on real files in `stateDir`, closing it afterwards. */
export const withStore = <A, E, R>(
  stateDir: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, unknown, Exclude<R, TaskStore | ResultSpool>> =>
  Effect.provide(effect, TaskStore.layer({ stateDir }))

/** The exit of opening the store (for the unsafe-directory cases). */
export const openExit = (stateDir: string) =>
  Effect.exit(Effect.scoped(Layer.build(TaskStore.layer({ stateDir }))))

export const failureTag = (exit: Exit.Exit<unknown, unknown>): string | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail"
    ? (exit.cause.error as { readonly _tag?: string })._tag
    : undefined

/** A raw SQL connection on the same database file, for inspecting what the store wrote. */
export const withRawSql = <A, E>(
  stateDir: string,
  effect: Effect.Effect<A, E, SqlClient.SqlClient>
): Effect.Effect<A, unknown> =>
  Effect.provide(effect, SqliteClient.layer({ filename: path.join(stateDir, "state.sqlite3") }))

/** `count` finished tasks (cancelled and interrupted in turn), inserted one after the other. */
export const insertFinished = (count: number) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    for (let i = 0; i < count; i++) {
      const taskId = yield* insertQueued()
      yield* store.transition(taskId, i % 2 === 0 ? "cancelled" : "interrupted")
    }
  })

/** SQLite's EXPLAIN QUERY PLAN of one of the store's statements, its details one per line. */
export const queryPlan = (
  stateDir: string,
  statement: (sql: SqlClient.SqlClient) => {
    readonly compile: () => readonly [string, ReadonlyArray<unknown>]
  }
) =>
  withRawSql(
    stateDir,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [text, params] = statement(sql).compile()
      const plan = yield* sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
      return plan.map((row) => row.detail).join("\n")
    })
  )

export const rawRows = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(query))
