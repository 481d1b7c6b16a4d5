/**
 * Result of {@link fstat} / {@link fstatat}.
 *
 * `dev` and `ino` are bigints because together they are the identity of a
 * file (used to detect a directory swapped under a held fd), and 64-bit inode
 * numbers do not survive a round-trip through a JS number. Times are
 * nanoseconds since the epoch, also as bigints, for the same reason.
 * `size` and `blocks` are numbers: exact up to 2^53 bytes (8 PiB).
 */
export interface Stat {
  dev: bigint
  ino: bigint
  /** File type and permission bits; test the type with `(mode & S.IFMT) === S.IFDIR`. */
  mode: number
  nlink: number
  uid: number
  gid: number
  size: number
  mtimeNs: bigint
  ctimeNs: bigint
  atimeNs: bigint
  /** Number of 512-byte blocks allocated. */
  blocks: number
}

/** Credentials of the process on the other end of a connected Unix socket (SO_PEERCRED). */
export interface PeerCred {
  pid: number
  uid: number
  gid: number
}

/** Result of {@link readdir}. */
export interface ReaddirResult {
  /** Entry names, without "." and "..", in the order the kernel returned them. */
  names: string[]
  /** `types[i]` is the d_type (see `DT`) of `names[i]`; `DT.UNKNOWN` on filesystems that do not report it. */
  types: Uint8Array
  /** Entries dropped because their name is not valid UTF-8. */
  undecodable: number
}

/**
 * The shape of every error a syscall wrapper throws, modelled on Node's own
 * fs errors: `code` ("ENOENT"), `errno` (negative, e.g. -2), `syscall`
 * ("openat") and message `"ENOENT: No such file or directory, openat"`.
 *
 * Unlike Node's errors there is never a `path`/`dest` property and the
 * message never contains the name argument: callers forward these errors
 * towards remote clients, who must not learn host paths.
 */
export interface PosixError extends Error {
  readonly code: string
  readonly errno: number
  readonly syscall: string
}
