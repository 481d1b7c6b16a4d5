/**
 * Direct access to a bridge's state from the test process, through the real store on the same
 * SQLite file (several processes may share it: every mutation is BEGIN IMMEDIATE). Used to leave
 * the state a crashed or older process would have left — a task inserted but never started, a
 * task finished long ago (the store's clock is a TestClock set in the past) — and to check the
 * database's integrity after the daemon stopped. Within one process, plant one task at a time:
 * each call opens its own connection, and better-sqlite3 waits for another connection's lock
 * synchronously — the holder, on the same thread, could never commit.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Manifest, TaskStatus } from "@serverfs/domain"
import { makeTaskId, ResultSpool, TaskStore, type TransitionPatch } from "@serverfs/store"
import { Effect, TestClock, TestContext } from "effect"

export interface PlantOptions {
  readonly status: TaskStatus
  readonly workdirAlias: string
  readonly slot: number
  readonly profile: "review" | "workspace-write"
  /** Recorded native session id (the scripted runtime's shape), if the turn had started. */
  readonly sessionId?: string
  /** The store's clock while planting (ms since the epoch); the real time when absent. */
  readonly atMillis?: number
  /** Spool this result (terminal `succeeded` only). */
  readonly spooledResult?: string
  readonly deadlineAt?: string
}

const manifestFor = (options: PlantOptions, deadlineAt: string): Manifest => ({
  schema_version: 2,
  bridge_version: "0.0.0-planted",
  protocol_version: 1,
  runtime: { name: "fake", version: "scripted-1", in_flight_recovery: "none" },
  workspace: { alias: options.workdirAlias, slot: options.slot, relative_cwd: "", profile: options.profile },
  policy: { read_only: false, agent_mode: options.profile, policy_sha256: "0".repeat(64) },
  model: { requested: null },
  limits: { max_active_tasks: 50 },
  continuation: { from_task_id: null },
  correlation_id: null,
  idempotency_key: null,
  deadline_at: deadlineAt
})

const PATHS: { readonly [S in TaskStatus]: ReadonlyArray<TaskStatus> } = {
  queued: [],
  starting: ["starting"],
  running: ["starting", "running"],
  waiting_for_approval: ["starting", "running", "waiting_for_approval"],
  waiting_for_question: ["starting", "running", "waiting_for_question"],
  succeeded: ["starting", "running", "succeeded"],
  failed: ["starting", "running", "failed"],
  cancelled: ["cancelled"],
  interrupted: ["starting", "running", "interrupted"]
}

/** Insert a task and drive it to `status` through the store's transition table. */
export const plantTask = (stateDir: string, options: PlantOptions): Promise<string> => {
  const program = Effect.gen(function* () {
    if (options.atMillis !== undefined) yield* TestClock.setTime(options.atMillis)
    const store = yield* TaskStore
    const spool = yield* ResultSpool
    const taskId = yield* makeTaskId
    const deadlineAt =
      options.deadlineAt ?? new Date((options.atMillis ?? Date.now()) + 3_600_000).toISOString()
    yield* store.insertTask(
      {
        task_id: taskId,
        runtime: "fake",
        workdir_alias: options.workdirAlias,
        workdir_slot: options.slot,
        relative_cwd: "",
        profile: options.profile,
        deadline_at: deadlineAt,
        continue_from_task_id: null,
        correlation_id: null,
        idempotency_key: null,
        request_fingerprint: "0".repeat(64),
        requested_model: null,
        manifest: manifestFor(options, deadlineAt)
      },
      { maxActiveTasks: 1_000 }
    )
    if (options.sessionId !== undefined) {
      yield* store.setNativeIds(taskId, { sessionId: options.sessionId, turnId: `fake-turn-${taskId}` })
    }
    for (const to of PATHS[options.status]) {
      let patch: TransitionPatch = {}
      if (to === "succeeded") {
        if (options.spooledResult !== undefined) {
          const written = yield* spool.writeResult(taskId, options.spooledResult)
          patch = {
            final_response: options.spooledResult.slice(0, 10),
            result_storage: "spool",
            result_size_bytes: written.size_bytes,
            result_sha256: written.sha256
          }
        } else {
          patch = { final_response: "planted", result_storage: "inline", result_size_bytes: 7 }
        }
      }
      if (to === "failed" || to === "interrupted") patch = { error_code: "AGENT_PROVIDER_ERROR" }
      yield* store.transition(taskId, to, patch)
    }
    return taskId
  })
  const timed = options.atMillis === undefined ? program : Effect.provide(program, TestContext.TestContext)
  return Effect.runPromise(Effect.scoped(Effect.provide(timed, TaskStore.layer({ stateDir }))))
}

/** `PRAGMA integrity_check` through the store (run after the daemon stopped). */
export const integrityCheck = (stateDir: string): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        Effect.flatMap(TaskStore, (store) => store.integrityCheck()),
        TaskStore.layer({ stateDir })
      )
    )
  )

export const spoolFile = (stateDir: string, taskId: string) => path.join(stateDir, "results", `${taskId}.txt`)

/** Write a recovery guard by hand, as the bridge would have (sorted keys, trailing newline). */
export const writeGuard = (
  lockDir: string,
  slot: number,
  guard: {
    readonly task_id: string
    readonly workdir_alias: string
    readonly native_session_id?: string | null
  }
): void => {
  const now = new Date().toISOString()
  const body = {
    correlation_id: null,
    created_at: now,
    native_session_id: guard.native_session_id ?? null,
    native_turn_id: null,
    runtime: "fake",
    schema_version: 1,
    slot,
    task_id: guard.task_id,
    updated_at: now,
    workdir_alias: guard.workdir_alias
  }
  fs.writeFileSync(path.join(lockDir, "active", String(slot).padStart(2, "0")), `${JSON.stringify(body)}\n`, {
    mode: 0o600
  })
}

/** The ids of every non-terminal task in the database (queried while the daemon runs). */
export const nonTerminalTaskIds = (stateDir: string): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        Effect.map(
          Effect.flatMap(TaskStore, (store) => store.listNonTerminal()),
          (tasks) => tasks.map((t) => t.task_id)
        ),
        TaskStore.layer({ stateDir })
      )
    )
  )

/** The state's accounted disk use (events + results), queried while the daemon runs. */
export const storageUsage = (stateDir: string): Promise<number> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        Effect.map(
          Effect.flatMap(TaskStore, (store) => store.storageUsage()),
          (usage) => usage.totalBytes
        ),
        TaskStore.layer({ stateDir })
      )
    )
  )
