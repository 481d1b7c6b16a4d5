import { NotAFile, SymlinkNotAllowed, UnsupportedFileType, type WalkError } from "@serverfs/domain"
import { AT, close, fstat, fstatat, O, openat, type Stat } from "@serverfs/posix"
import { Effect, type Scope } from "effect"
import { isDirectory, isRegular, isSymlink } from "./FileKind.js"
import { type At, codeOf, toWalkError } from "./OsError.js"

/**
 * Open the final name below a held parent as a regular file (tool-contracts §2.5, §5).
 *
 * The entry is lstat'ed first, so a FIFO, socket or device is refused without ever being opened
 * (opening a device can have side effects; a FIFO could block). The open itself uses
 * O_NOFOLLOW|O_NONBLOCK and the fd is fstat'ed again: if the name was swapped between the two
 * calls, the fd's own type decides, never the name's.
 */
export interface OpenedFile {
  readonly fd: number
  readonly stat: Stat
}

const refusal = (stat: Stat, at: At): WalkError | undefined => {
  if (isRegular(stat)) return undefined
  if (isSymlink(stat)) return new SymlinkNotAllowed(at)
  if (isDirectory(stat)) return new NotAFile(at)
  return new UnsupportedFileType(at)
}

export const openRegularFileSync = (
  parent: number,
  name: string,
  flags: number,
  at: At
): OpenedFile | WalkError => {
  let before: Stat
  try {
    before = fstatat(parent, name, AT.SYMLINK_NOFOLLOW)
  } catch (error) {
    return toWalkError(error, at)
  }
  const refused = refusal(before, at)
  if (refused !== undefined) return refused
  let fd: number
  try {
    fd = openat(parent, name, flags | O.NOFOLLOW | O.NONBLOCK)
  } catch (error) {
    // ELOOP: the name became a symlink after the lstat.
    return codeOf(error) === "ELOOP" ? new SymlinkNotAllowed(at) : toWalkError(error, at)
  }
  try {
    const stat = fstat(fd)
    const late = refusal(stat, at)
    if (late !== undefined) {
      close(fd)
      return late
    }
    return { fd, stat }
  } catch (error) {
    close(fd)
    return toWalkError(error, at)
  }
}

/** The scoped form: the fd is closed when the scope ends. */
export const openRegularFile = (
  parent: number,
  name: string,
  flags: number,
  at: At
): Effect.Effect<OpenedFile, WalkError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const opened = openRegularFileSync(parent, name, flags, at)
      return "fd" in opened ? Effect.succeed(opened) : Effect.fail(opened)
    }),
    (opened) => Effect.sync(() => close(opened.fd))
  )
