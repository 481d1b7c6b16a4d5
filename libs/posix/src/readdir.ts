import { native } from "./native.js"
import type { ReaddirResult } from "./types.js"

/**
 * List the directory `dirfd` refers to (which may be an O_PATH fd).
 *
 * The caller's fd is left untouched: the addon reopens "." relative to it to
 * get a private file offset, so concurrent listings of the same fd cannot
 * skip or repeat entries. "." and ".." are skipped. Names that are not
 * strictly valid UTF-8 are dropped and counted in `undecodable`, because a
 * lossy decode could not be used to reopen the same file.
 *
 * @throws {@link PosixError} (syscall "openat", "fdopendir" or "readdir")
 */
export function readdir(dirfd: number): ReaddirResult {
  const raw = native.readdir(dirfd)
  // "/" cannot occur in a name, so splitting is unambiguous.
  const names = raw.types.length === 0 ? [] : raw.joined.split("/")
  return { names, types: raw.types, undecodable: raw.undecodable }
}
