import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { StateDirectoryUnsafe } from "@serverfs/domain"
import { Context, Effect, Layer } from "effect"
import { makeEventLog } from "./EventLog.js"
import { makeImmediateTransaction } from "./ImmediateTransaction.js"
import { runMigrations } from "./Migrations.js"
import { makePendingRequests } from "./PendingRequests.js"
import { ResultSpool } from "./ResultSpool.js"
import { makeRetention } from "./Retention.js"
import { forceDatabaseModes, prepareStateDirectory } from "./StateDirectory.js"
import { makeStoreContext } from "./StoreContext.js"
import { makeTaskAge } from "./TaskAge.js"
import { makeTaskListing } from "./TaskListing.js"
import { makeTaskRows } from "./TaskRows.js"
import type { TaskStoreShape } from "./TaskStoreShape.js"

/**
 * The bridge's durable task store (bridge-internals §5–§7, spec v0.7): tasks, the global event
 * log, pending approvals/questions, idempotency, the active-task cap and retention GC, over one
 * SQLite connection. Every mutation is one `BEGIN IMMEDIATE` transaction, so each check it makes
 * (the cap, a duplicate key, the current request) holds until it commits. A status changes only
 * through the domain's transition table.
 *
 * Database failures (I/O errors, a corrupt file, a lock held past busy_timeout) are defects: the
 * bridge reports them as BRIDGE_PROTOCOL_ERROR; the typed errors are the contract's codes.
 *
 * This file assembles the concerns (TaskRows, EventLog, PendingRequests, Retention) over one
 * shared StoreContext; the contract itself is TaskStoreShape.
 */

const makeStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // bridge-internals §5: foreign keys on (events and requests cascade with their task),
  // busy_timeout 5000 ms. WAL + synchronous NORMAL (SQLite's recommended pairing): a committed
  // transaction survives any crash of the process; only an OS crash or power loss can lose the
  // last commits, never corrupt the database. FULL would fsync every event (10–20 ms each here).
  yield* Effect.orDie(sql`PRAGMA foreign_keys = ON`)
  yield* Effect.orDie(sql`PRAGMA busy_timeout = 5000`)
  yield* Effect.orDie(sql`PRAGMA synchronous = NORMAL`)
  yield* Effect.orDie(sql`PRAGMA cache_size = -256`)
  // Under the write lock: a second connection opening the same file meanwhile (tests plant tasks
  // side by side; the bridge itself holds an instance lock) waits for the schema instead of
  // taking the Migrator's "already running" answer and writing to tables not yet created.
  yield* Effect.orDie(makeImmediateTransaction(sql)(runMigrations))
  const ctx = yield* makeStoreContext
  const events = makeEventLog(ctx)
  const tasks = makeTaskRows(ctx, events)
  const requests = makePendingRequests(ctx, events)
  const retention = makeRetention(ctx, tasks)
  const age = makeTaskAge(ctx)
  const listing = makeTaskListing(ctx)

  /** `PRAGMA integrity_check`: `["ok"]` for a sound database. */
  const integrityCheck = () =>
    Effect.orDie(
      Effect.map(sql<Record<string, unknown>>`PRAGMA integrity_check`, (rows) =>
        rows.map((row) => String(Object.values(row)[0]))
      )
    )

  const shape: TaskStoreShape = {
    insertTask: tasks.insertTask,
    getTask: tasks.getTask,
    findByIdempotencyKey: tasks.findByIdempotencyKey,
    listNonTerminal: tasks.listNonTerminal,
    listTasks: listing.listTasks,
    listTerminalTaskIdsOlderThan: tasks.listTerminalTaskIdsOlderThan,
    hasTaskCreatedBefore: age.hasTaskCreatedBefore,
    transition: tasks.transition,
    setNativeIds: tasks.setNativeIds,
    appendEvent: events.appendEvent,
    appendEvents: events.appendEvents,
    readEvents: events.readEvents,
    createPendingRequest: requests.createPendingRequest,
    resolveRequest: requests.resolveRequest,
    staleRequest: requests.staleRequest,
    abandonPendingRequest: requests.abandonPendingRequest,
    getPendingRequest: requests.getPendingRequest,
    gc: retention.gc,
    storageUsage: retention.storageUsage,
    retentionCheck: retention.retentionCheck,
    evictForBudget: retention.evictForBudget,
    integrityCheck
  }
  return shape
})

const verifyWal = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* Effect.orDie(sql<{ readonly journal_mode: string }>`PRAGMA journal_mode`)
  if (rows[0]?.journal_mode !== "wal")
    return yield* Effect.dieMessage("the state database is not in WAL mode")
})

const layerFile = (options: {
  readonly stateDir: string
}): Layer.Layer<TaskStore | ResultSpool, StateDirectoryUnsafe> =>
  Layer.unwrapEffect(
    Effect.map(prepareStateDirectory(options.stateDir), (paths) => {
      const store = Layer.scoped(
        TaskStore,
        Effect.gen(function* () {
          yield* verifyWal
          const shape = yield* makeStore
          // SQLite has now created -wal and -shm; make sure all three are private.
          yield* forceDatabaseModes(paths)
          return shape
        })
      )
      return store.pipe(
        Layer.provide(Layer.orDie(SqliteClient.layer({ filename: paths.database }))),
        Layer.provideMerge(ResultSpool.layer({ stateDir: paths.stateDir }))
      )
    })
  )

const layerMemory = (): Layer.Layer<TaskStore | ResultSpool> =>
  Layer.scoped(TaskStore, makeStore).pipe(
    Layer.provide(Layer.orDie(SqliteClient.layer({ filename: ":memory:" }))),
    Layer.provideMerge(ResultSpool.layerMemory())
  )

export class TaskStore extends Context.Tag("@serverfs/store/TaskStore")<TaskStore, TaskStoreShape>() {
  /**
   * The store in `<stateDir>/state.sqlite3` plus the result spool in `<stateDir>/results/`. The
   * state directory is checked (or created 0700) first; the database closes when the layer's
   * scope ends.
   */
  static readonly layer = layerFile
  /** An in-memory database and spool, for fast unit tests. */
  static readonly layerMemory = layerMemory
}
