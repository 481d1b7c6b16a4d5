import { NotADirectory, SymlinkNotAllowed, type WalkError } from "@serverfs/domain"
import { AT, close, fstatat, hasOpenat2, O, openat, openat2, RESOLVE } from "@serverfs/posix"
import { Effect, type Scope } from "effect"
import { isDirectory, isSymlink } from "./FileKind.js"
import { type At, codeOf, toWalkError } from "./OsError.js"

/**
 * The descriptor walk (spec v0.2 §4/§6, tool-contracts §5 "Filesystem enforcement"): a request
 * path is opened component by component from the held workdir root with
 * `O_DIRECTORY|O_NOFOLLOW`, so no symlink at any depth is ever followed and no path string is
 * ever handed to the kernel whole. Later steps act on the final name relative to the parent fd.
 *
 * Where the kernel has openat2, one `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS` call opens the whole
 * chain first (the kernel itself refuses `..` and links); any refusal falls back to the
 * component walk, which is both the safe path and the one that says precisely what was wrong.
 */
export class WalkFailure {
  constructor(readonly error: WalkError) {}
}

/** What a failed walk (or a syscall after it) reports: the walk's own error, else the errno's. */
export const walkErrorOf = (error: unknown, at: At): WalkError =>
  error instanceof WalkFailure ? error.error : toWalkError(error, at)

const DIRECTORY_FLAGS = O.DIRECTORY | O.NOFOLLOW
const BENEATH = RESOLVE.BENEATH | RESOLVE.NO_SYMLINKS | RESOLVE.NO_MAGICLINKS

/**
 * Classify a failed `openat(parent, name, O_DIRECTORY|O_NOFOLLOW)`. Linux says ENOTDIR for a
 * symlink. The name is lstat'ed again to say which: a symlink, or a directory now — which means
 * it was swapped for a symlink and back while we looked (a non-directory at open time that is a
 * directory now was a link in between) — is SYMLINK_NOT_ALLOWED; anything else NOT_A_DIRECTORY.
 */
const classifyDirectoryOpen = (error: unknown, parent: number, name: string, at: At): WalkError => {
  const code = codeOf(error)
  if (code === "ENOTDIR" || code === "ELOOP") {
    try {
      const stat = fstatat(parent, name, AT.SYMLINK_NOFOLLOW)
      return isSymlink(stat) || isDirectory(stat) ? new SymlinkNotAllowed(at) : new NotADirectory(at)
    } catch (again) {
      return toWalkError(again, at)
    }
  }
  return toWalkError(error, at)
}

const slowWalk = (root: number, components: ReadonlyArray<string>, access: number, at: At): number => {
  let current = root
  try {
    for (let i = 0; i < components.length; i++) {
      const name = components[i]!
      // Intermediate directories only need search permission, as in a normal path lookup.
      const flags = DIRECTORY_FLAGS | (i === components.length - 1 ? access : O.PATH)
      let next: number
      try {
        next = openat(current, name, flags)
      } catch (error) {
        throw new WalkFailure(classifyDirectoryOpen(error, current, name, at))
      }
      if (current !== root) close(current)
      current = next
    }
    if (current === root) current = openat(root, ".", O.DIRECTORY | access)
    return current
  } catch (error) {
    if (current !== root) close(current)
    if (error instanceof WalkFailure) throw error
    throw new WalkFailure(toWalkError(error, at))
  }
}

/**
 * Open the directory `components` below `root` (`[]` is the root itself) with `access`
 * (O.PATH to use it only as an anchor, O.RDONLY to list or fsync it). The caller owns the fd.
 * @throws WalkFailure
 */
export const openDirectorySync = (
  root: number,
  components: ReadonlyArray<string>,
  access: number,
  at: At
): number => {
  if (hasOpenat2 && components.length > 0) {
    try {
      return openat2(root, components.join("/"), DIRECTORY_FLAGS | access, 0, BENEATH)
    } catch {
      // Fall through: the component walk classifies the refusal (or succeeds after a race).
    }
  }
  return slowWalk(root, components, access, at)
}

/** A directory fd that lives as long as the surrounding scope. */
export const openDirectory = (
  root: number,
  components: ReadonlyArray<string>,
  access: number,
  at: At
): Effect.Effect<number, WalkError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => openDirectorySync(root, components, access, at),
      catch: (e) => walkErrorOf(e, at)
    }),
    (fd) => Effect.sync(() => close(fd))
  )

/**
 * The parent directory of a non-root path, opened for `access`, and the final name to act on.
 * A missing or non-directory parent fails with the parent-level code; channels that must say
 * PARENT_NOT_FOUND map PATH_NOT_FOUND themselves.
 */
export const openParent = (
  root: number,
  components: ReadonlyArray<string>,
  access: number,
  at: At
): Effect.Effect<{ readonly fd: number; readonly name: string }, WalkError, Scope.Scope> =>
  Effect.map(openDirectory(root, components.slice(0, -1), access, at), (fd) => ({
    fd,
    name: components[components.length - 1]!
  }))
