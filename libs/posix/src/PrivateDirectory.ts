import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Data, Effect, type Scope } from "effect"
import { AT, O, S } from "./constants.js"
import { mkdirat } from "./entries.js"
import { isPosixError } from "./errors.js"
import { fchmod, fchown } from "./fd.js"
import { close, openat } from "./open.js"
import { fstat, fstatat } from "./stat.js"
import type { Stat } from "./types.js"

/**
 * The one preparation of a private directory (socket dir, state dir, result spool, lock dir):
 * the bridge keeps what nobody else may plant, read or swap in them, so every caller needs the
 * same guarantees, checked the same way:
 *
 * - the path is absolute, and the entry is a real directory — a symlink (even one pointing at a
 *   perfectly private directory, or dangling) is refused, never followed, and nothing is
 *   created at its target;
 * - it is owned by this process's effective uid (a foreign owner could chmod it back open);
 * - nobody but the owner can write into it (group/other write is refused, never repaired: a
 *   directory somebody else could write into may already hold their entries);
 * - a missing directory is created with `mode` whatever the umask (fchmod after mkdir);
 * - an existing one with another mode is refused (`existing: "exact"`) or brought to `mode`
 *   (`existing: "conform"`, for directories whose sharing is configurable: switching to shared
 *   mode must not lock the peer out, switching back must not leave it open to the group);
 * - every check after the first lstat is made on a descriptor opened O_DIRECTORY|O_NOFOLLOW
 *   whose dev/ino match what was inspected, so the directory judged is the one chmod'ed.
 *
 * Errors carry a problem kind and never the path: each caller maps them to its own frozen code
 * and message (a host path must not reach a client).
 */
export type PrivateDirectoryProblem =
  | "not-absolute"
  | "missing"
  | "symlink"
  | "not-a-directory"
  | "foreign-owner"
  | "writable-by-others"
  | "wrong-mode"
  | "changed"
  | "cannot-create"
  | "cannot-inspect"
  | "cannot-set-mode"
  | "cannot-set-group"

const PHRASES: Readonly<Record<PrivateDirectoryProblem, string>> = {
  "not-absolute": "is not an absolute path",
  missing: "does not exist",
  symlink: "is a symbolic link",
  "not-a-directory": "is not a directory",
  "foreign-owner": "is not owned by this user",
  "writable-by-others": "is group- or world-writable",
  "wrong-mode": "does not have the required mode",
  changed: "changed while it was being checked",
  "cannot-create": "cannot be created",
  "cannot-inspect": "cannot be inspected",
  "cannot-set-mode": "cannot be given its mode",
  "cannot-set-group": "cannot be given the shared group"
}

export class PrivateDirectoryError extends Data.TaggedError("PrivateDirectoryError")<{
  readonly problem: PrivateDirectoryProblem
  /** The errno behind the problem, when there was one (never a path). */
  readonly errno?: string
}> {
  /** "the directory <phrase>": a path-free sentence callers may prefix with their own subject. */
  get phrase(): string {
    return PHRASES[this.problem]
  }
  override get message(): string {
    return `the directory ${this.phrase}`
  }
}

export interface PrivateDirectoryOptions {
  /** The directory's mode: 0o700, or 0o750 where a peer group may search it. Never group-writable. */
  readonly mode: number
  /** An existing directory with another mode: refuse it, or bring it to `mode`. */
  readonly existing: "exact" | "conform"
  /** Give the directory this group (shared mode). */
  readonly group?: number | undefined
  /** Create a missing directory (default true); false reports `missing`. */
  readonly create?: boolean | undefined
  /** Create missing parents too, with the same mode (default false). */
  readonly parents?: boolean | undefined
}

export interface PrivateDirectory {
  /** Held O_RDONLY|O_DIRECTORY|O_NOFOLLOW (and O_CLOEXEC). */
  readonly fd: number
  readonly created: boolean
  readonly dev: bigint
  readonly ino: bigint
}

const codeOf = (error: unknown): string | undefined => (isPosixError(error) ? error.code : undefined)
/** node:fs's errno code (EACCES, …); not its ERR_* argument-validation codes, which are bugs. */
const nodeCodeOf = (error: unknown): string | undefined => {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined
}
const problem = (kind: PrivateDirectoryProblem, errno?: string) =>
  new PrivateDirectoryError(errno === undefined ? { problem: kind } : { problem: kind, errno })
const euid = (): number => process.geteuid?.() ?? -1
const typeOf = (stat: Stat): number => stat.mode & S.IFMT
const GROUP_OR_OTHER_WRITE = 0o022

/** lstat, or undefined when nothing is there. */
const inspect = (dir: string): Stat | undefined | PrivateDirectoryError => {
  try {
    return fstatat(AT.FDCWD, dir, AT.SYMLINK_NOFOLLOW)
  } catch (error) {
    const code = codeOf(error)
    if (code === "ENOENT") return undefined
    if (code === "ENOTDIR") return problem("not-a-directory", code)
    if (isPosixError(error)) return problem("cannot-inspect", code)
    throw error
  }
}

/** mkdir; an EEXIST (somebody made it meanwhile) is judged like any existing entry. */
const create = (dir: string, options: PrivateDirectoryOptions): boolean | PrivateDirectoryError => {
  try {
    if (options.parents === true) fs.mkdirSync(nodePath.dirname(dir), { recursive: true, mode: options.mode })
    mkdirat(AT.FDCWD, dir, options.mode)
    return true
  } catch (error) {
    const code = codeOf(error) ?? nodeCodeOf(error)
    if (code === "EEXIST") return false
    if (code !== undefined) return problem("cannot-create", code)
    throw error
  }
}

const judge = (
  fd: number,
  inspected: Stat,
  created: boolean,
  options: PrivateDirectoryOptions
): PrivateDirectory | PrivateDirectoryError => {
  const held = fstat(fd)
  if (typeOf(held) !== S.IFDIR) return problem("not-a-directory")
  if (held.dev !== inspected.dev || held.ino !== inspected.ino) return problem("changed")
  if (held.uid !== euid()) return problem("foreign-owner")
  const permissions = held.mode & 0o777
  if (!created && (permissions & GROUP_OR_OTHER_WRITE) !== 0) return problem("writable-by-others")
  if (permissions !== options.mode) {
    if (!created && options.existing === "exact") return problem("wrong-mode")
    try {
      fchmod(fd, options.mode)
    } catch (error) {
      if (!isPosixError(error)) throw error
      return problem("cannot-set-mode", error.code)
    }
  }
  if (options.group !== undefined && held.gid !== options.group) {
    try {
      fchown(fd, -1, options.group)
    } catch (error) {
      if (!isPosixError(error)) throw error
      return problem("cannot-set-group", error.code)
    }
  }
  // Re-read: the mode must hold now (a setgid parent or an ACL default can't widen it silently).
  if ((fstat(fd).mode & GROUP_OR_OTHER_WRITE) !== 0) return problem("writable-by-others")
  return { fd, created, dev: held.dev, ino: held.ino }
}

/**
 * The synchronous core: the checked directory, held open (the caller closes `fd`), or the
 * problem. Only errors of the checked syscalls become problems; anything else is thrown (a
 * defect, not a refusal).
 */
export const openPrivateDirectorySync = (
  dir: string,
  options: PrivateDirectoryOptions
): PrivateDirectory | PrivateDirectoryError => {
  if (!nodePath.isAbsolute(dir)) return problem("not-absolute")
  let inspected = inspect(dir)
  if (inspected instanceof PrivateDirectoryError) return inspected
  let created = false
  if (inspected === undefined) {
    if (options.create === false) return problem("missing")
    const made = create(dir, options)
    if (made instanceof PrivateDirectoryError) return made
    created = made
    inspected = inspect(dir)
    if (inspected instanceof PrivateDirectoryError) return inspected
    if (inspected === undefined) return problem("changed")
  }
  if (typeOf(inspected) === S.IFLNK) return problem("symlink")
  if (typeOf(inspected) !== S.IFDIR) return problem("not-a-directory")
  let fd: number
  try {
    fd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY | O.NOFOLLOW)
  } catch (error) {
    const code = codeOf(error)
    // Swapped for a link or a file between the lstat and the open.
    if (code === "ELOOP" || code === "ENOTDIR") return problem("changed", code)
    if (isPosixError(error)) return problem("cannot-inspect", code)
    throw error
  }
  try {
    const outcome = judge(fd, inspected, created, options)
    if (outcome instanceof PrivateDirectoryError) close(fd)
    return outcome
  } catch (error) {
    close(fd)
    if (isPosixError(error)) return problem("cannot-inspect", error.code)
    throw error
  }
}

/** The checked private directory, its descriptor held for the scope. */
export const openPrivateDirectory = (
  dir: string,
  options: PrivateDirectoryOptions
): Effect.Effect<PrivateDirectory, PrivateDirectoryError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const outcome = openPrivateDirectorySync(dir, options)
      return outcome instanceof PrivateDirectoryError ? Effect.fail(outcome) : Effect.succeed(outcome)
    }),
    ({ fd }) => Effect.sync(() => close(fd))
  )

/** Check (or create) the private directory; nothing stays open. */
export const preparePrivateDirectory = (
  dir: string,
  options: PrivateDirectoryOptions
): Effect.Effect<{ readonly created: boolean }, PrivateDirectoryError> =>
  Effect.scoped(Effect.map(openPrivateDirectory(dir, options), ({ created }) => ({ created })))
