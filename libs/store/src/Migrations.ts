import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ACTIVE } from "./StoreContext.js"

/**
 * The schema of `state.sqlite3` (bridge-internals §5), as additive migrations run by the plain
 * `Migrator` of @effect/sql (no platform services needed). Each migration runs once, in order,
 * recorded in `effect_sql_migrations`; later versions only ever add migrations, never edit one.
 */
const initial = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tasks (
      task_id TEXT PRIMARY KEY NOT NULL CHECK (task_id GLOB 'agt_*'),
      runtime TEXT NOT NULL,
      workdir_alias TEXT NOT NULL,
      workdir_slot INTEGER NOT NULL DEFAULT 0,
      relative_cwd TEXT NOT NULL,
      profile TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('queued', 'starting', 'running', 'waiting_for_approval',
        'waiting_for_question', 'succeeded', 'failed', 'cancelled', 'interrupted')),
      created_at TEXT NOT NULL,
      started_at TEXT,
      updated_at TEXT NOT NULL,
      completed_at TEXT,
      deadline_at TEXT NOT NULL,
      continue_from_task_id TEXT,
      correlation_id TEXT,
      idempotency_key TEXT,
      request_fingerprint TEXT NOT NULL,
      requested_model TEXT,
      native_session_id TEXT,
      native_turn_id TEXT,
      final_response TEXT,
      result_storage TEXT CHECK (result_storage IN ('inline', 'spool')),
      result_size_bytes INTEGER,
      result_sha256 TEXT,
      manifest_json TEXT NOT NULL,
      manifest_sha256 TEXT NOT NULL,
      error_code TEXT,
      error_message TEXT,
      pending_request_id TEXT,
      event_count INTEGER NOT NULL DEFAULT 0 CHECK (event_count >= 0)
    ) STRICT`
  yield* sql`CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX tasks_status ON tasks (status)`
  yield* sql`CREATE INDEX tasks_completed_at ON tasks (completed_at) WHERE completed_at IS NOT NULL`
  // spec v0.7 §2.4: the manifest and the submission facts are fixed at creation; there is no
  // update API, and this trigger makes a stray UPDATE fail instead of rewriting evidence.
  yield* sql`
    CREATE TRIGGER tasks_identity_immutable
    BEFORE UPDATE OF task_id, runtime, workdir_alias, workdir_slot, relative_cwd, profile, created_at,
      deadline_at, continue_from_task_id, correlation_id, idempotency_key, request_fingerprint,
      requested_model, manifest_json, manifest_sha256 ON tasks
    BEGIN
      SELECT RAISE(ABORT, 'task identity and manifest are immutable');
    END`
  // AUTOINCREMENT: event ids are never reused, even after GC deleted the newest rows, so a
  // client cursor can never skip or repeat an event.
  yield* sql`
    CREATE TABLE events (
      event_id INTEGER PRIMARY KEY AUTOINCREMENT,
      task_id TEXT NOT NULL REFERENCES tasks (task_id) ON DELETE CASCADE,
      event_type TEXT NOT NULL,
      payload_json TEXT NOT NULL,
      created_at TEXT NOT NULL
    ) STRICT`
  yield* sql`CREATE INDEX events_task_event ON events (task_id, event_id)`
  yield* sql`
    CREATE TABLE pending_requests (
      request_id TEXT PRIMARY KEY NOT NULL CHECK (request_id GLOB 'req_*'),
      task_id TEXT NOT NULL REFERENCES tasks (task_id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('approval', 'question')),
      status TEXT NOT NULL CHECK (status IN ('pending', 'resolved', 'stale')),
      payload_json TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      resolved_at TEXT,
      resolution_json TEXT
    ) STRICT`
  yield* sql`CREATE INDEX pending_requests_task_status ON pending_requests (task_id, status)`
  // At most one open interaction per task, whatever the code above does.
  yield* sql`CREATE UNIQUE INDEX pending_requests_one_pending ON pending_requests (task_id) WHERE status = 'pending'`
})

/**
 * The disk budget (issue 14): each task keeps a running total of the bytes its events take, so
 * the state's usage is one aggregate over the tasks table, never a walk over events or files.
 * Existing events are counted once here, with the same formula as the store's appends.
 */
const storedBytes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tasks ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0 CHECK (stored_bytes >= 0)`
  yield* sql`
    UPDATE tasks SET stored_bytes = (
      SELECT COALESCE(SUM(length(CAST(payload_json AS BLOB)) + length(CAST(event_type AS BLOB)) + ${EVENT_ROW_OVERHEAD_BYTES}), 0)
      FROM events WHERE events.task_id = tasks.task_id)`
  // Covers the usage sum and the oldest-finished-first eviction scan: neither reads task rows,
  // whose manifests and inline results would make a table scan heavy.
  yield* sql`
    CREATE INDEX tasks_storage
    ON tasks (completed_at, status, stored_bytes, result_storage, result_size_bytes, task_id)`
})

/**
 * The operator's task listing (issue 10) reads newest first: an index on the creation order
 * keeps `ORDER BY created_at DESC LIMIT n` a bounded index walk instead of a sort of the table.
 */
const taskListing = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX tasks_created ON tasks (created_at, task_id)`
})

/** What a task's result counts: the bytes stored inline or spooled, plus a spooled one's preview. */
export const RESULT_PREVIEW_ALLOWANCE_BYTES = 65_536

/**
 * What one task counts against the disk budget, as SQL over a row of `tasks` (`row` is "" for the
 * table itself, or NEW / OLD in a trigger): its events' running total (0002), its result, and a
 * spooled result's preview allowance. It is part of the schema: migration 0004 keeps totals of
 * it in triggers, so a change to it takes a new migration that rebuilds them.
 */
export const taskBudgetBytes = (row: "" | "NEW" | "OLD"): string => {
  const column = (name: string) => (row === "" ? name : `${row}.${name}`)
  return `(${column("stored_bytes")} + COALESCE(${column("result_size_bytes")}, 0) + CASE ${column("result_storage")} WHEN 'spool' THEN ${RESULT_PREVIEW_ALLOWANCE_BYTES} ELSE 0 END)`
}

/**
 * 1 when the row's task is still active (not finished), else 0. The statuses are written into the
 * triggers when migration 0004 runs: a change to the domain's active statuses takes a new
 * migration that rebuilds them, as a change to `taskBudgetBytes` does.
 */
const isActive = (row: "" | "NEW" | "OLD"): string =>
  `(${row === "" ? "" : `${row}.`}status IN (${ACTIVE.map((status) => `'${status}'`).join(", ")}))`

/**
 * The disk budget's totals, kept by triggers in the transaction that changes a task (issue 12):
 * the bytes of every task, and the bytes and number of the active ones. The budget was a sum over
 * every task retained (0002's covering index), read at every submit and at the end of every
 * task: 0.3–0.5 ms a submit in the bridge bench, 1.7 ms with 5,000 tasks retained. Now it is one
 * row. Existing tasks are counted once here, with the same formula the triggers use.
 */
const storageTotals = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE storage_totals (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      total_bytes INTEGER NOT NULL,
      active_bytes INTEGER NOT NULL,
      active_tasks INTEGER NOT NULL
    ) STRICT`
  yield* sql.unsafe(`
    INSERT INTO storage_totals (id, total_bytes, active_bytes, active_tasks)
    SELECT 1, COALESCE(SUM(bytes), 0), COALESCE(SUM(active * bytes), 0), COALESCE(SUM(active), 0)
    FROM (SELECT ${taskBudgetBytes("")} AS bytes, ${isActive("")} AS active FROM tasks)`)
  /** The totals moved by one row's share, added (+) or taken away (-). */
  const move = (row: "NEW" | "OLD", sign: "+" | "-") =>
    `total_bytes = total_bytes ${sign} ${taskBudgetBytes(row)},
      active_bytes = active_bytes ${sign} ${isActive(row)} * ${taskBudgetBytes(row)},
      active_tasks = active_tasks ${sign} ${isActive(row)}`
  yield* sql.unsafe(`
    CREATE TRIGGER storage_totals_insert AFTER INSERT ON tasks
    BEGIN
      UPDATE storage_totals SET ${move("NEW", "+")} WHERE id = 1;
    END`)
  yield* sql.unsafe(`
    CREATE TRIGGER storage_totals_delete AFTER DELETE ON tasks
    BEGIN
      UPDATE storage_totals SET ${move("OLD", "-")} WHERE id = 1;
    END`)
  yield* sql.unsafe(`
    CREATE TRIGGER storage_totals_update
    AFTER UPDATE OF status, stored_bytes, result_storage, result_size_bytes ON tasks
    BEGIN
      UPDATE storage_totals SET ${move("OLD", "-")} WHERE id = 1;
      UPDATE storage_totals SET ${move("NEW", "+")} WHERE id = 1;
    END`)
})

/** What one event row costs beyond its payload and type: ids, timestamp, index entries. */
export const EVENT_ROW_OVERHEAD_BYTES = 96

export const MIGRATIONS_TABLE = "effect_sql_migrations"

export const migrations = {
  "0001_initial": initial,
  "0002_stored_bytes": storedBytes,
  "0003_task_listing": taskListing,
  "0004_storage_totals": storageTotals
}

/** Brings a database of any earlier version (or an empty one) to the current schema. */
export const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: MIGRATIONS_TABLE
})
