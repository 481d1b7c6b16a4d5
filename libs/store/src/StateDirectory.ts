import * as fs from "node:fs"
import * as path from "node:path"
import { StateDirectoryUnsafe } from "@serverfs/domain"
import { type PrivateDirectoryProblem, preparePrivateDirectory } from "@serverfs/posix"
import { Effect } from "effect"

/**
 * The private state directory (bridge-internals §5): a real directory (never a symlink, which
 * could redirect the database elsewhere) owned by this uid with mode 0700, created 0700 when
 * missing; the database and its -wal/-shm companions are regular files owned by this uid,
 * forced to 0600. Because nobody else can write into a 0700 directory we own, path-based calls
 * on entries inside it cannot be raced by another user once the directory itself is checked.
 *
 * Messages never carry the path (ARCHITECTURE: no host path in an error).
 */
export const DATABASE_FILE = "state.sqlite3"
export const DATABASE_COMPANIONS = ["-wal", "-shm"] as const

export interface StatePaths {
  readonly stateDir: string
  readonly database: string
}

const unsafe = (message: string) => new StateDirectoryUnsafe({ message })

const lstatOrUndefined = (target: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(target)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

const currentUid = (): number => process.getuid?.() ?? -1

/** The private-directory refusals, in this directory's words (tests and operators rely on them). */
const STATE_PHRASES: Readonly<Record<PrivateDirectoryProblem, string>> = {
  "not-absolute": "the state directory must be an absolute path",
  missing: "the state directory does not exist",
  symlink: "the state directory is a symbolic link",
  "not-a-directory": "the state directory is not a directory",
  "foreign-owner": "the state directory is not owned by this user",
  "writable-by-others": "the state directory must have mode 0700",
  "wrong-mode": "the state directory must have mode 0700",
  changed: "the state directory changed while opened",
  "cannot-create": "the state directory cannot be prepared",
  "cannot-inspect": "the state directory cannot be prepared",
  "cannot-set-mode": "the state directory cannot be prepared",
  "cannot-set-group": "the state directory cannot be prepared"
}

/**
 * A real directory of ours with mode exactly 0700 (created 0700, with its parents, whatever the
 * umask); an existing one with any other mode is refused, never repaired.
 */
const checkDirectory = (stateDir: string): Effect.Effect<void, StateDirectoryUnsafe> =>
  preparePrivateDirectory(stateDir, { mode: 0o700, existing: "exact", parents: true }).pipe(
    Effect.asVoid,
    Effect.mapError((refused) => unsafe(STATE_PHRASES[refused.problem]))
  )

/** A database file that exists must be a regular file of ours; it is then forced to 0600. */
const forcePrivateFile = (file: string): void => {
  const st = lstatOrUndefined(file)
  if (st === undefined) return
  if (!st.isFile() || st.isSymbolicLink()) throw unsafe("a state database file is not a regular file")
  if (st.uid !== currentUid()) throw unsafe("a state database file is not owned by this user")
  if ((st.mode & 0o7777) !== 0o600) fs.chmodSync(file, 0o600)
}

const databaseFiles = (paths: StatePaths): ReadonlyArray<string> => [
  paths.database,
  ...DATABASE_COMPANIONS.map((suffix) => `${paths.database}${suffix}`)
]

/** An I/O failure (errno) is this directory's refusal; anything else is a defect, not relabelled. */
const guard = <A>(what: string, f: () => A): Effect.Effect<A, StateDirectoryUnsafe> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(f())
    } catch (error) {
      if (error instanceof StateDirectoryUnsafe) return Effect.fail(error)
      if (isErrnoException(error)) return Effect.fail(unsafe(`the state directory ${what}`))
      return Effect.die(error)
    }
  })

/** A system error (EACCES, ENOSPC, …), not one of Node's argument-validation ERR_* codes (bugs). */
const isErrnoException = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && /^E[A-Z0-9]+$/.test(String((error as NodeJS.ErrnoException).code))

/**
 * Checks (or creates) the state directory and nothing else: the bridge takes its instance lock
 * inside it before anything reads or writes the state.
 */
export const checkStateDirectory = (stateDir: string): Effect.Effect<void, StateDirectoryUnsafe> =>
  checkDirectory(stateDir)

/**
 * Checks (or creates) the state directory and pre-creates the database 0600, so SQLite — which
 * gives -wal and -shm the database's own mode — never makes a world-readable file.
 */
export const prepareStateDirectory = (stateDir: string): Effect.Effect<StatePaths, StateDirectoryUnsafe> =>
  Effect.zipRight(
    checkDirectory(stateDir),
    guard("cannot be prepared", () => {
      const paths: StatePaths = { stateDir, database: path.join(stateDir, DATABASE_FILE) }
      if (lstatOrUndefined(paths.database) === undefined) {
        const fd = fs.openSync(
          paths.database,
          fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
          0o600
        )
        try {
          fs.fchmodSync(fd, 0o600)
        } finally {
          fs.closeSync(fd)
        }
      }
      for (const file of databaseFiles(paths)) forcePrivateFile(file)
      return paths
    })
  )

/**
 * Forces 0600 on the database, -wal and -shm once SQLite has opened them. Path-based on
 * purpose: opening and closing our own descriptor on a file SQLite holds would drop SQLite's
 * POSIX locks on it.
 */
export const forceDatabaseModes = (paths: StatePaths): Effect.Effect<void, StateDirectoryUnsafe> =>
  guard("cannot be secured", () => {
    for (const file of databaseFiles(paths)) forcePrivateFile(file)
  })
