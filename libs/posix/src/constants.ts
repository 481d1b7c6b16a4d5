// Flag values come from the addon (i.e. from this platform's C headers), never
// from literals here: O_DIRECTORY, O_NOFOLLOW and O_PATH differ between
// architectures, and a wrong O_NOFOLLOW would silently follow symlinks.
import { native } from "./native.js"

function pick<const K extends string>(group: string, keys: readonly K[]): Readonly<Record<K, number>> {
  const source = native.constants[group as keyof typeof native.constants]
  const out = {} as Record<K, number>
  for (const key of keys) {
    const value = source?.[key]
    // A missing constant would otherwise become `undefined`, which `|`
    // coerces to 0: e.g. a missing NOFOLLOW would quietly mean "follow".
    if (typeof value !== "number") throw new Error(`@serverfs/posix: addon lacks constant ${group}.${key}`)
    out[key] = value
  }
  return Object.freeze(out)
}

/**
 * open(2) flags. `PATH` is 0 where the platform lacks O_PATH.
 * The wrappers add `CLOEXEC` to every fd they open whether or not it is passed.
 */
export const O = pick("O", [
  "RDONLY",
  "WRONLY",
  "RDWR",
  "CREAT",
  "EXCL",
  "NOFOLLOW",
  "DIRECTORY",
  "NONBLOCK",
  "CLOEXEC",
  "PATH",
  "TRUNC",
  "NOCTTY",
  "APPEND"
])

/** *at() flags, and `FDCWD` (resolve relative to the working directory; avoid in server code). */
export const AT = pick("AT", ["SYMLINK_NOFOLLOW", "REMOVEDIR", "EMPTY_PATH", "FDCWD"])

/** openat2(2) `resolve` flags (Linux ≥ 5.6). */
export const RESOLVE = pick("RESOLVE", ["BENEATH", "NO_SYMLINKS", "NO_MAGICLINKS", "NO_XDEV", "IN_ROOT"])

/** flock(2) operations. */
export const LOCK = pick("LOCK", ["SH", "EX", "NB", "UN"])

/** renameat2(2) flags. */
export const RENAME = pick("RENAME", ["NOREPLACE", "EXCHANGE"])

/** fsetxattr(2) flags. */
export const XATTR = pick("XATTR", ["CREATE", "REPLACE"])

/** d_type values reported by {@link readdir}. */
export const DT = pick("DT", ["UNKNOWN", "FIFO", "CHR", "DIR", "BLK", "REG", "LNK", "SOCK"])

/** File type bits of `Stat.mode`. */
export const S = pick("S", ["IFMT", "IFREG", "IFDIR", "IFLNK", "IFIFO", "IFSOCK", "IFCHR", "IFBLK"])
