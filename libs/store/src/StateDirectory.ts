import * as fs from "node:fs"
import * as path from "node:path"
import { StateDirectoryUnsafe } from "@serverfs/domain"
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

const checkDirectory = (stateDir: string): void => {
  let before = lstatOrUndefined(stateDir)
  let created = false
  if (before === undefined) {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    created = true
    before = fs.lstatSync(stateDir)
  }
  if (before.isSymbolicLink()) throw unsafe("the state directory is a symbolic link")
  if (!before.isDirectory()) throw unsafe("the state directory is not a directory")
  if (before.uid !== currentUid()) throw unsafe("the state directory is not owned by this user")
  // Re-check through a descriptor opened without following links, so the directory we judged
  // is the one we chmod (and, for a new one, the mode is 0700 whatever the umask).
  const fd = fs.openSync(stateDir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW)
  try {
    const held = fs.fstatSync(fd)
    if (held.dev !== before.dev || held.ino !== before.ino)
      throw unsafe("the state directory changed while opened")
    if (created) fs.fchmodSync(fd, 0o700)
    // Permission bits only: group and others get nothing, the owner gets rwx.
    const mode = created ? 0o700 : held.mode & 0o777
    if (mode !== 0o700) throw unsafe("the state directory must have mode 0700")
  } finally {
    fs.closeSync(fd)
  }
}

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

const guard = <A>(what: string, f: () => A): Effect.Effect<A, StateDirectoryUnsafe> =>
  Effect.try({
    try: f,
    catch: (error) => (error instanceof StateDirectoryUnsafe ? error : unsafe(`the state directory ${what}`))
  })

/**
 * Checks (or creates) the state directory and nothing else: the bridge takes its instance lock
 * inside it before anything reads or writes the state.
 */
export const checkStateDirectory = (stateDir: string): Effect.Effect<void, StateDirectoryUnsafe> =>
  guard("cannot be prepared", () => {
    if (!path.isAbsolute(stateDir)) throw unsafe("the state directory must be an absolute path")
    checkDirectory(stateDir)
  })

/**
 * Checks (or creates) the state directory and pre-creates the database 0600, so SQLite — which
 * gives -wal and -shm the database's own mode — never makes a world-readable file.
 */
export const prepareStateDirectory = (stateDir: string): Effect.Effect<StatePaths, StateDirectoryUnsafe> =>
  guard("cannot be prepared", () => {
    if (!path.isAbsolute(stateDir)) throw unsafe("the state directory must be an absolute path")
    const paths: StatePaths = { stateDir, database: path.join(stateDir, DATABASE_FILE) }
    checkDirectory(stateDir)
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

/**
 * Forces 0600 on the database, -wal and -shm once SQLite has opened them. Path-based on
 * purpose: opening and closing our own descriptor on a file SQLite holds would drop SQLite's
 * POSIX locks on it.
 */
export const forceDatabaseModes = (paths: StatePaths): Effect.Effect<void, StateDirectoryUnsafe> =>
  guard("cannot be secured", () => {
    for (const file of databaseFiles(paths)) forcePrivateFile(file)
  })
