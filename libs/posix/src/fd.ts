// Operations on an fd already opened through the walk, so they cannot be
// redirected by a symlink or rename racing a path lookup.
import { native } from "./native.js"

/**
 * fsync(2): make a written file (or a directory's new entries) durable
 * before reporting success.
 *
 * @throws {@link PosixError} (syscall "fsync")
 */
export function fsync(fd: number): void {
  native.fsync(fd)
}

/**
 * fchown(2). Pass -1 to leave the uid or gid unchanged.
 *
 * @throws {@link PosixError} (syscall "fchown")
 */
export function fchown(fd: number, uid: number, gid: number): void {
  native.fchown(fd, uid, gid)
}

/**
 * fchmod(2).
 *
 * @throws {@link PosixError} (syscall "fchmod")
 */
export function fchmod(fd: number, mode: number): void {
  native.fchmod(fd, mode)
}
