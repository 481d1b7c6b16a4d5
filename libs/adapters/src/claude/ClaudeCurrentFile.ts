import * as fs from "node:fs"
import * as path from "node:path"
import { AT, close, fstat, hasOpenat2, isPosixError, O, openat, openat2, RESOLVE, S } from "@serverfs/posix"

/**
 * The current text of the file a Claude `Write` would replace, for the approval's diff (issue 15
 * item 2). Read only through the workdir-safe path: openat2 from the workdir root with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (no `..` escape, no symlink anywhere on the way, checked
 * atomically by the kernel), O_NOFOLLOW | O_NONBLOCK (a FIFO cannot block the callback), a
 * regular file only, at most CURRENT_FILE_MAX_BYTES. Everything else is `unknown`: the approval
 * then shows the new content without claiming add or update. Nothing here names the path in an
 * error (there is none: every failure is an answer).
 */
export type CurrentFile =
  | { readonly _tag: "missing" }
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "unknown" }

/** The largest current file read for a diff (a larger one shows the new content only). */
export const CURRENT_FILE_MAX_BYTES = 1_048_576

const UNKNOWN: CurrentFile = { _tag: "unknown" }

export const readCurrentFile = (workdirRoot: string, filePath: string): CurrentFile => {
  const relative = path.relative(workdirRoot, path.resolve(workdirRoot, filePath))
  // Outside the workdir (or the root itself): never read.
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return UNKNOWN
  if (!hasOpenat2) return UNKNOWN
  let rootFd = -1
  let fd = -1
  try {
    rootFd = openat(AT.FDCWD, workdirRoot, O.PATH | O.DIRECTORY)
    try {
      fd = openat2(
        rootFd,
        relative,
        O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.NOCTTY,
        0,
        RESOLVE.BENEATH | RESOLVE.NO_SYMLINKS | RESOLVE.NO_MAGICLINKS
      )
    } catch (error) {
      return isPosixError(error) && error.code === "ENOENT" ? { _tag: "missing" } : UNKNOWN
    }
    const stat = fstat(fd)
    if ((stat.mode & S.IFMT) !== S.IFREG || stat.size > CURRENT_FILE_MAX_BYTES) return UNKNOWN
    const buffer = Buffer.alloc(CURRENT_FILE_MAX_BYTES + 1)
    let length = 0
    for (;;) {
      const read = fs.readSync(fd, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
      // Grown past the bound while being read: not shown.
      if (length > CURRENT_FILE_MAX_BYTES) return UNKNOWN
    }
    return { _tag: "text", text: buffer.subarray(0, length).toString("utf8") }
  } catch {
    return UNKNOWN
  } finally {
    if (fd !== -1) close(fd)
    if (rootFd !== -1) close(rootFd)
  }
}
