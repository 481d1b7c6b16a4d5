import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import * as net from "node:net"

/**
 * The floor under a task.submit round trip, in raw parts measured in the same run:
 *
 * - one SQLite INSERT of a task-sized row with better-sqlite3 (the driver under the bridge's
 *   @effect/sql-sqlite-node), WAL journal, synchronous NORMAL, foreign keys on, one
 *   `BEGIN IMMEDIATE … COMMIT` per row, as the bridge's store does it;
 * - one request/response of a ~300-byte NDJSON line over a Unix socket to a trivial node `net`
 *   echo server in another process, on a new connection each time (as serverfs-mcp connects
 *   once per call);
 * - for the MCP row, the same round trip relayed by a third process: the line goes to a trivial
 *   node relay over its stdin, the relay makes the round trip to the echo server and writes the
 *   answer to its stdout — the processes and hops of client → serverfs-mcp → bridge, doing
 *   nothing else.
 */
interface Statement {
  run(...params: ReadonlyArray<unknown>): unknown
}

interface Database {
  pragma(source: string): unknown
  exec(source: string): unknown
  prepare(source: string): Statement
  close(): void
}

type DatabaseConstructor = new (filename: string) => Database

const require = createRequire(import.meta.url)

const openDatabase = (file: string): Database => {
  let Sqlite: DatabaseConstructor
  try {
    Sqlite = require("better-sqlite3") as DatabaseConstructor
  } catch {
    throw new Error("cannot load better-sqlite3: run npm install at the repository root")
  }
  const db = new Sqlite(file)
  // The store's pragmas (libs/store/src/TaskStore.ts; WAL is @effect/sql-sqlite-node's default).
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.pragma("foreign_keys = ON")
  db.pragma("busy_timeout = 5000")
  return db
}

// The bridge's `tasks` and `events` tables (libs/store/src/Migrations.ts), without the trigger.
const SCHEMA = `
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
) STRICT;
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX tasks_status ON tasks (status);
CREATE INDEX tasks_completed_at ON tasks (completed_at) WHERE completed_at IS NOT NULL;
CREATE TABLE events (
  event_id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL REFERENCES tasks (task_id) ON DELETE CASCADE,
  event_type TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_task_event ON events (task_id, event_id);
`

const hex = (bytes: number): string => randomBytes(bytes).toString("hex")

/** A private SQLite database with the bridge's schema, for raw inserts. */
export class RawTaskStore {
  private readonly db: Database
  private readonly begin: Statement
  private readonly commit: Statement
  private readonly insertTask: Statement
  private readonly insertEvent: Statement

  constructor(
    file: string,
    /** The manifest stored in every row: a real one, from the bridge. */
    private readonly manifestJson: string
  ) {
    this.db = openDatabase(file)
    this.db.exec(SCHEMA)
    this.begin = this.db.prepare("BEGIN IMMEDIATE")
    this.commit = this.db.prepare("COMMIT")
    this.insertTask = this.db.prepare(
      `INSERT INTO tasks (task_id, runtime, workdir_alias, workdir_slot, relative_cwd, profile, status,
        created_at, updated_at, deadline_at, request_fingerprint, manifest_json, manifest_sha256)
       VALUES (?, 'fake', 'bench', 1, '', 'review', 'queued', ?, ?, ?, ?, ?, ?)`
    )
    this.insertEvent = this.db.prepare(
      "INSERT INTO events (task_id, event_type, payload_json, created_at) VALUES (?, 'agent.message', ?, ?)"
    )
  }

  /** One task row in its own BEGIN IMMEDIATE … COMMIT; returns its id. */
  insertTaskRow(): string {
    const taskId = `agt_${hex(12)}`
    const now = new Date().toISOString()
    this.begin.run()
    try {
      this.insertTask.run(taskId, now, now, now, hex(32), this.manifestJson, hex(32))
      this.commit.run()
    } catch (error) {
      this.db.exec("ROLLBACK")
      throw error
    }
    return taskId
  }

  /** `count` event rows of one task, each in its own transaction; returns the rows per second. */
  insertEvents(taskId: string, count: number): number {
    const started = performance.now()
    for (let i = 1; i <= count; i++) {
      this.begin.run()
      this.insertEvent.run(taskId, JSON.stringify({ text: `message ${i}` }), new Date().toISOString())
      this.commit.run()
    }
    return count / ((performance.now() - started) / 1000)
  }

  close(): void {
    this.db.close()
  }
}

const ECHO_SERVER = `
const net = require("node:net")
const server = net.createServer((socket) => {
  socket.on("data", (chunk) => socket.write(chunk))
  socket.on("error", () => {})
})
server.listen(process.argv[1], () => process.stdout.write("ready\\n"))
process.on("SIGTERM", () => server.close(() => process.exit(0)))
`

/** A request line of about 300 bytes shaped like serverfs-mcp's task.submit line. */
export const requestLine = (): Buffer => {
  const head = `{"protocol_version":1,"request_id":"mcp_${hex(12)}","method":"task.submit","params":{"runtime":"fake","workdir":"bench","path":"","profile":"review","prompt":"complete:x","correlation_id":"`
  const tail = `"}}\n`
  return Buffer.from(head + "x".repeat(Math.max(0, 300 - head.length - tail.length)) + tail, "utf8")
}

/** A trivial echo server in its own node process, on a Unix socket. */
export class EchoServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly socketPath: string
  ) {}

  static start(socketPath: string): Promise<EchoServer> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["-e", ECHO_SERVER, socketPath], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      child.on("error", reject)
      child.on("exit", (code) => reject(new Error(`echo server exited with ${code}`)))
      child.stdout!.once("data", () => resolve(new EchoServer(child, socketPath)))
    })
  }

  /** Connect, send one line, read it back up to its newline, close. */
  roundTrip(line: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ path: this.socketPath })
      let received = 0
      socket.on("connect", () => socket.write(line))
      socket.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (chunk.includes(10) && received >= line.length) {
          socket.destroy()
          resolve()
        }
      })
      socket.on("error", reject)
    })
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.removeAllListeners("exit")
      this.child.once("exit", () => resolve())
      this.child.kill("SIGTERM")
    })
  }
}

const RELAY = `
const net = require("node:net")
let pending = Buffer.alloc(0)
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk])
  const end = pending.indexOf(10)
  if (end < 0) return
  const line = pending.subarray(0, end + 1)
  pending = pending.subarray(end + 1)
  const socket = net.createConnection({ path: process.argv[1] })
  let answer = Buffer.alloc(0)
  socket.on("connect", () => socket.write(line))
  socket.on("data", (part) => {
    answer = Buffer.concat([answer, part])
    if (answer.indexOf(10) < 0) return
    socket.destroy()
    process.stdout.write(answer)
  })
  socket.on("error", () => process.exit(1))
})
process.stdin.on("end", () => process.exit(0))
`

/**
 * A trivial relay in its own node process: one line at a time from its stdin to the echo server
 * (a new connection each time) and the answer back on its stdout.
 */
export class RawRelay {
  private waiting: { readonly resolve: () => void; readonly reject: (error: Error) => void } | undefined
  private received = Buffer.alloc(0)

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk])
      if (this.received.indexOf(10) < 0) return
      this.received = Buffer.alloc(0)
      const waiting = this.waiting
      this.waiting = undefined
      waiting?.resolve()
    })
    child.on("exit", (code) => this.waiting?.reject(new Error(`the raw relay exited with ${code}`)))
  }

  static start(echo: EchoServer): RawRelay {
    return new RawRelay(
      spawn(process.execPath, ["-e", RELAY, echo.socketPath], { stdio: ["pipe", "pipe", "inherit"] })
    )
  }

  /** Write one line to the relay and wait for its answer line (one at a time). */
  roundTrip(line: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.waiting !== undefined) throw new Error("the raw relay takes one line at a time")
      this.waiting = { resolve, reject }
      this.child.stdin!.write(line)
    })
  }

  stop(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve()
    return new Promise((resolve) => {
      this.child.once("exit", () => resolve())
      this.child.stdin!.end()
    })
  }
}
