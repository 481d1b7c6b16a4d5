import { slotId } from "@serverfs/policy"
import {
  close,
  fchmod,
  fchown,
  flock,
  fstat,
  isPosixError,
  isWouldBlock,
  LOCK,
  O,
  openat,
  type Stat
} from "@serverfs/posix"
import { Data, Effect, type Scope } from "effect"
import { isRegular } from "../FileKind.js"

/** `<lock dir>/NN.lock`: one lock file per workdir slot. */
export const lockFileName = (slot: number): string => `${slotId(slot)}.lock`

/**
 * The one way a lock file is opened (bridge-internals §9), by both roles of the workdir lease
 * and by the bridge's instance lock:
 * - O_RDONLY: flock needs no write access, and the MCP process (a peer of the group in shared
 *   mode) can only read the bridge's 0640 file;
 * - O_NOFOLLOW: a symlink planted as the lock file is refused (ELOOP), never followed to a file
 *   somebody else controls;
 * - O_NONBLOCK: a FIFO planted there cannot block the open (it is then refused by type);
 * - O_CLOEXEC (added by @serverfs/posix): no child process inherits a lease;
 * then the descriptor must be a regular file with one link (a hard link would make another
 * name share the lock) — and, for the bridge's own files, owned by this uid.
 * Problems carry no path; each role maps them to its own frozen code.
 */
export type LockFileProblem =
  | "cannot-open"
  | "not-a-regular-file"
  | "hard-linked"
  | "foreign-owner"
  | "cannot-set-mode"
  | "busy"
  | "cannot-lock"

export class LockFileRefused extends Data.TaggedError("LockFileRefused")<{
  readonly problem: LockFileProblem
  readonly errno?: string
}> {}

const LOCK_FILE_FLAGS = O.RDONLY | O.NOFOLLOW | O.NONBLOCK

export interface LockFileOptions {
  /** Create a missing file with this mode, and bring an existing one of ours to it. */
  readonly create?: { readonly mode: number; readonly group?: number | undefined } | undefined
  /** The file must be owned by this uid (always so with `create`). */
  readonly owned?: boolean | undefined
}

export interface OpenLockFile {
  readonly fd: number
  readonly stat: Stat
}

const refused = (problem: LockFileProblem, error?: unknown) =>
  new LockFileRefused(isPosixError(error) ? { problem, errno: error.code } : { problem })

const check = (fd: number, options: LockFileOptions): Stat | LockFileRefused => {
  const stat = fstat(fd)
  if (!isRegular(stat)) return refused("not-a-regular-file")
  if (stat.nlink !== 1) return refused("hard-linked")
  if ((options.owned === true || options.create !== undefined) && stat.uid !== process.geteuid?.())
    return refused("foreign-owner")
  if (options.create !== undefined) {
    const { mode, group } = options.create
    try {
      if ((stat.mode & 0o7777) !== mode) fchmod(fd, mode)
      if (group !== undefined && stat.gid !== group) fchown(fd, -1, group)
    } catch (error) {
      if (!isPosixError(error)) throw error
      return refused("cannot-set-mode", error)
    }
  }
  return stat
}

/**
 * Open and check `name` relative to `at` (a held directory, or AT.FDCWD with an absolute path).
 * Only errno failures become refusals; anything else is a defect.
 */
export const openLockFileSync = (
  at: number,
  name: string,
  options: LockFileOptions = {}
): OpenLockFile | LockFileRefused => {
  let fd: number
  try {
    fd =
      options.create === undefined
        ? openat(at, name, LOCK_FILE_FLAGS)
        : openat(at, name, LOCK_FILE_FLAGS | O.CREAT, options.create.mode)
  } catch (error) {
    if (!isPosixError(error)) throw error
    return refused("cannot-open", error)
  }
  try {
    const stat = check(fd, options)
    if (stat instanceof LockFileRefused) close(fd)
    return stat instanceof LockFileRefused ? stat : { fd, stat }
  } catch (error) {
    close(fd)
    if (!isPosixError(error)) throw error
    return refused("cannot-open", error)
  }
}

/** flock(LOCK_EX|LOCK_NB): never blocking the event loop; held by another descriptor → busy. */
export const lockExclusiveSync = (fd: number): LockFileRefused | undefined => {
  try {
    flock(fd, LOCK.EX | LOCK.NB)
    return undefined
  } catch (error) {
    if (!isPosixError(error)) throw error
    return refused(isWouldBlock(error) ? "busy" : "cannot-lock", error)
  }
}

/** The checked lock file, flock'ed exclusively, for the scope (closing the fd drops the flock). */
export const holdLockFile = (
  at: number,
  name: string,
  options: LockFileOptions = {}
): Effect.Effect<OpenLockFile, LockFileRefused, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const opened = openLockFileSync(at, name, options)
      if (opened instanceof LockFileRefused) return Effect.fail(opened)
      const notLocked = lockExclusiveSync(opened.fd)
      if (notLocked === undefined) return Effect.succeed(opened)
      close(opened.fd)
      return Effect.fail(notLocked)
    }),
    ({ fd }) => Effect.sync(() => close(fd))
  )
