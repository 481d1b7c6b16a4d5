import { native } from "./native.js"
import type { Stat } from "./types.js"

/**
 * fstatat(2). Pass `AT.SYMLINK_NOFOLLOW` to stat a symlink itself (its mode
 * then has type `S.IFLNK`) instead of whatever it points at, which may be
 * outside the served tree; `AT.EMPTY_PATH` with name "" stats `dirfd` itself.
 *
 * @throws {@link PosixError} (syscall "fstatat")
 */
export function fstatat(dirfd: number, name: string, flags: number): Stat {
  return native.fstatat(dirfd, name, flags)
}

/**
 * fstat(2): stat an fd already held, e.g. to compare dev/ino before and after
 * a walk and detect a directory that was swapped.
 *
 * @throws {@link PosixError} (syscall "fstat")
 */
export function fstat(fd: number): Stat {
  return native.fstat(fd)
}

/** What {@link fstatatEntries} reports for one name that could be stat'ed. */
export interface EntryStat {
  /** File type and permission bits, as in {@link Stat}. */
  readonly mode: number
  readonly size: number
  /** st_mtim.tv_sec: whole seconds since the epoch, rounded down. */
  readonly mtimeSeconds: number
}

/**
 * fstatat(2) of each of `names` below `dirfd` in one call into the addon: a page of a listing
 * costs one crossing instead of one Stat object (with five BigInts) per entry. `undefined` for a
 * name that could not be stat'ed (vanished since the listing, for instance). A name must be one
 * entry of the directory: "", "." and ".." are never stat'ed (undefined), and a name holding "/"
 * throws.
 *
 * @throws {TypeError} ERR_INVALID_ARG_VALUE for a name with "/" or NUL
 */
export function fstatatEntries(
  dirfd: number,
  names: ReadonlyArray<string>,
  flags: number
): Array<EntryStat | undefined> {
  const cells = native.fstatatEntries(dirfd, names.join("/"), flags, names.length)
  const out = new Array<EntryStat | undefined>(names.length)
  for (let i = 0; i < names.length; i++) {
    const at = i * 4
    out[i] =
      cells[at + 3] === 0
        ? { mode: cells[at]!, size: cells[at + 1]!, mtimeSeconds: cells[at + 2]! }
        : undefined
  }
  return out
}
