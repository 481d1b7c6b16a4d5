import { AT, O } from "./constants.js"
import { native } from "./native.js"

/**
 * openat(2), with O_CLOEXEC always added.
 *
 * The building block of the server's component-by-component walk: each step
 * opens one name relative to the previous directory fd with
 * `O.DIRECTORY | O.NOFOLLOW`, so a symlink planted anywhere along the path is
 * refused instead of followed. Note the kernel reports that refusal as
 * ENOTDIR, not ELOOP, when O_DIRECTORY is also set (the "must be a directory"
 * check fires first); on a final, non-directory open with O_NOFOLLOW it is
 * ELOOP.
 *
 * The native layer does not reject "/" or ".." in `name`: keeping names to a
 * single component is the caller's policy. `mode` defaults to 0, so pass one
 * with `O.CREAT` (a file created without it has permissions 0000).
 *
 * @throws {@link PosixError} (syscall "openat"); TypeError (code ERR_INVALID_ARG_VALUE) if `name`
 *   contains a NUL byte or a lone surrogate.
 */
export function openat(dirfd: number, name: string, flags: number, mode?: number): number {
  return mode === undefined ? native.openat(dirfd, name, flags) : native.openat(dirfd, name, flags, mode)
}

/**
 * openat2(2) (Linux ≥ 5.6), with O_CLOEXEC always added.
 *
 * With `RESOLVE.BENEATH | RESOLVE.NO_SYMLINKS` the kernel resolves a whole
 * relative path atomically and refuses any `..` escape (EXDEV) or symlink
 * (ELOOP), closing the race a userspace walk has to defend against step by
 * step. `mode` must be 0 unless `O.CREAT` is set (the kernel returns EINVAL).
 *
 * @throws {@link PosixError} with code "ENOSYS" where the kernel (or platform) lacks openat2;
 *   check {@link hasOpenat2} first.
 */
export function openat2(dirfd: number, path: string, flags: number, mode: number, resolve: number): number {
  return native.openat2(dirfd, path, flags, mode, resolve)
}

/**
 * close(2). Not retried on EINTR: Linux has already released the descriptor
 * then, and a retry could close an unrelated fd that reused the number.
 */
export function close(fd: number): void {
  native.close(fd)
}

function probeOpenat2(): boolean {
  try {
    native.close(native.openat2(AT.FDCWD, "/", O.PATH, 0, 0))
    return true
  } catch {
    // ENOSYS on old kernels; EPERM/ENOSYS from seccomp filters in some
    // container runtimes. Either way openat2 is unusable here.
    return false
  }
}

/** Whether openat2(2) works on this kernel; probed once when the module loads. */
export const hasOpenat2: boolean = probeOpenat2()
