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
