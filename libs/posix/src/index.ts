/**
 * @serverfs/posix: the POSIX calls Node lacks, for a filesystem server that
 * walks every path component by component from a held directory fd.
 *
 * All calls are synchronous. Every fd they return has O_CLOEXEC. Errors are
 * {@link PosixError}s (code / negative errno / syscall) that never contain
 * the name or path argument. String arguments containing NUL (or a lone
 * surrogate) throw a TypeError with code ERR_INVALID_ARG_VALUE instead of
 * being truncated. EINTR is retried (except by close, see there).
 */
export { AT, DT, LOCK, O, RENAME, RESOLVE, S, XATTR } from "./constants.js"
export { linkat, mkdirat, mkfifoat, renameat, renameat2, symlinkat, unlinkat } from "./entries.js"
export { isPosixError, isWouldBlock } from "./errors.js"
export { fchmod, fchown, fsync } from "./fd.js"
export { flock } from "./flock.js"
export { close, hasOpenat2, openat, openat2 } from "./open.js"
export {
  openPrivateDirectory,
  openPrivateDirectorySync,
  type PrivateDirectory,
  PrivateDirectoryError,
  type PrivateDirectoryOptions,
  type PrivateDirectoryProblem,
  preparePrivateDirectory
} from "./PrivateDirectory.js"
export { peerCred } from "./peerCred.js"
export { readdir, readdirAsync } from "./readdir.js"
export { type EntryStat, fstat, fstatat, fstatatEntries } from "./stat.js"
export type { PeerCred, PosixError, ReaddirResult, Stat } from "./types.js"
export { fgetxattr, flistxattr, fremovexattr, fsetxattr } from "./xattr.js"
