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
  return toResult(native.readdir(dirfd))
}

/**
 * {@link readdir} with the directory read on the libuv thread pool, so a directory of hundreds
 * of thousands of entries does not hold the event loop. The private fd is opened before this
 * returns: the caller may close `dirfd` at any time afterwards.
 *
 * @throws {@link PosixError} synchronously (syscall "openat") or as the rejection ("fdopendir",
 *   "readdir")
 */
export async function readdirAsync(dirfd: number): Promise<ReaddirResult> {
  const raw = await native.readdirAsync(dirfd)
  // Splitting 200,000 names at once takes tens of milliseconds: split in slices, handing the
  // event loop back (a macrotask) between two.
  const count = raw.types.length
  const names = new Array<string>(count)
  let position = 0
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % SPLIT_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve))
    const end = raw.joined.indexOf("/", position)
    names[i] = raw.joined.slice(position, end === -1 ? raw.joined.length : end)
    position = end + 1
  }
  return { names, types: raw.types, undecodable: raw.undecodable }
}

/** Names split between two yields of readdirAsync. */
const SPLIT_SLICE = 4096

const toResult = (raw: { joined: string; types: Uint8Array; undecodable: number }): ReaddirResult => {
  // "/" cannot occur in a name, so splitting is unambiguous.
  const names = raw.types.length === 0 ? [] : raw.joined.split("/")
  return { names, types: raw.types, undecodable: raw.undecodable }
}
