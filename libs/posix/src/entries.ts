// Directory-entry mutations, all relative to held directory fds so that the
// parent directory cannot be swapped between checking and acting.
import { native } from "./native.js"

/**
 * linkat(2). Never replaces an existing `newname` (EEXIST), which makes it
 * the "publish without clobbering" primitive. Pass `flags` 0 (or
 * `AT.EMPTY_PATH` with name "" to link an fd): AT_SYMLINK_FOLLOW is
 * deliberately not exported, since following a symlink `oldname` could hard
 * link a file from outside the served tree into it.
 *
 * @throws {@link PosixError} (syscall "linkat")
 */
export function linkat(
  olddirfd: number,
  oldname: string,
  newdirfd: number,
  newname: string,
  flags: number
): void {
  native.linkat(olddirfd, oldname, newdirfd, newname, flags)
}

/**
 * renameat(2): atomically replaces `newname` if it exists.
 *
 * @throws {@link PosixError} (syscall "renameat")
 */
export function renameat(olddirfd: number, oldname: string, newdirfd: number, newname: string): void {
  native.renameat(olddirfd, oldname, newdirfd, newname)
}

/**
 * renameat2(2) (Linux ≥ 3.15). `RENAME.NOREPLACE` fails with EEXIST instead
 * of replacing (no check-then-rename race); `RENAME.EXCHANGE` atomically
 * swaps two existing entries.
 *
 * @throws {@link PosixError} (syscall "renameat2"); code "ENOSYS" off Linux,
 *   "EINVAL" where the filesystem does not support the flag.
 */
export function renameat2(
  olddirfd: number,
  oldname: string,
  newdirfd: number,
  newname: string,
  flags: number
): void {
  native.renameat2(olddirfd, oldname, newdirfd, newname, flags)
}

/**
 * unlinkat(2); `AT.REMOVEDIR` removes an (empty) directory instead of a file.
 *
 * @throws {@link PosixError} (syscall "unlinkat")
 */
export function unlinkat(dirfd: number, name: string, flags: number): void {
  native.unlinkat(dirfd, name, flags)
}

/**
 * mkdirat(2). Fails with EEXIST on any existing entry, including a symlink,
 * so it never follows a planted link.
 *
 * @throws {@link PosixError} (syscall "mkdirat")
 */
export function mkdirat(dirfd: number, name: string, mode: number): void {
  native.mkdirat(dirfd, name, mode)
}

/**
 * symlinkat(2). `target` is stored verbatim and not resolved. Mainly for
 * tests that build attack trees.
 *
 * @throws {@link PosixError} (syscall "symlinkat")
 */
export function symlinkat(target: string, newdirfd: number, linkname: string): void {
  native.symlinkat(target, newdirfd, linkname)
}

/**
 * mkfifoat(3). Mainly for tests: a FIFO is what makes a naive open() block
 * forever, so walkers must recognise it (DT.FIFO / S.IFIFO) first.
 *
 * @throws {@link PosixError} (syscall "mkfifoat")
 */
export function mkfifoat(dirfd: number, name: string, mode: number): void {
  native.mkfifoat(dirfd, name, mode)
}
