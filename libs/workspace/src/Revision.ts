import { createHash } from "node:crypto"
import type { Stat } from "@serverfs/posix"

/**
 * The revision token of tool-contracts §6 / spec v0.2 §5:
 * `v1:` + the first 16 hex digits of SHA-256 over
 * `st_dev:st_ino:st_mode:st_uid:st_gid:st_size:st_mtime_ns:st_ctime_ns:st_nlink`.
 *
 * It changes with content and metadata (ctime moves on chmod, link, rename), and it hides the raw
 * inode, device and owner numbers it is built from. It is not a content hash.
 */
export const revisionOf = (stat: Stat): string => {
  const material = `${stat.dev}:${stat.ino}:${stat.mode}:${stat.uid}:${stat.gid}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.nlink}`
  return `v1:${createHash("sha256").update(material).digest("hex").slice(0, 16)}`
}

/**
 * Whether two stats give the same revision, compared on the fields the token is made of (no
 * second hash: read_text_file compares the fd's stat before and after the read).
 */
export const sameRevision = (a: Stat, b: Stat): boolean =>
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.mode === b.mode &&
  a.uid === b.uid &&
  a.gid === b.gid &&
  a.size === b.size &&
  a.mtimeNs === b.mtimeNs &&
  a.ctimeNs === b.ctimeNs &&
  a.nlink === b.nlink
