// Extended attributes, by fd only: a path-based getxattr could be redirected
// by a symlink swapped in after the walk checked the path.
import { native } from "./native.js"

/**
 * flistxattr(2): names of the extended attributes visible to this process.
 * Names that are not valid UTF-8 are dropped. A list that grows between the
 * size query and the read is retried with a bigger buffer.
 *
 * @throws {@link PosixError} (syscall "flistxattr")
 */
export function flistxattr(fd: number): string[] {
  return native.flistxattr(fd)
}

/**
 * fgetxattr(2): the raw value, retried with a bigger buffer if it grows
 * between the size query and the read (ERANGE race).
 *
 * @throws {@link PosixError} (syscall "fgetxattr"); code "ENODATA" if the attribute does not exist.
 */
export function fgetxattr(fd: number, name: string): Buffer {
  return native.fgetxattr(fd, name)
}

/**
 * fsetxattr(2). `flags` is 0, `XATTR.CREATE` (fail with EEXIST if present) or
 * `XATTR.REPLACE` (fail with ENODATA if absent).
 *
 * @throws {@link PosixError} (syscall "fsetxattr")
 */
export function fsetxattr(fd: number, name: string, value: Buffer | Uint8Array, flags: number): void {
  native.fsetxattr(fd, name, value, flags)
}

/**
 * fremovexattr(2).
 *
 * @throws {@link PosixError} (syscall "fremovexattr"), e.g. ENODATA when the attribute is absent
 */
export function fremovexattr(fd: number, name: string): void {
  native.fremovexattr(fd, name)
}
