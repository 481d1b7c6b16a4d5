import type { EntryType } from "@serverfs/domain"
import { DT, S, type Stat } from "@serverfs/posix"
import { DateTime } from "effect"

/** What a mode or d_type says an entry is, in the contract's four types. */
export const entryTypeOfMode = (mode: number): EntryType => {
  switch (mode & S.IFMT) {
    case S.IFREG:
      return "file"
    case S.IFDIR:
      return "directory"
    case S.IFLNK:
      return "symlink"
    default:
      return "other"
  }
}

export const isRegular = (stat: Stat): boolean => (stat.mode & S.IFMT) === S.IFREG
export const isDirectory = (stat: Stat): boolean => (stat.mode & S.IFMT) === S.IFDIR
export const isSymlink = (stat: Stat): boolean => (stat.mode & S.IFMT) === S.IFLNK

/** d_type of a readdir entry; DT.UNKNOWN means the filesystem did not say (callers then fstatat). */
export const entryTypeOfDirent = (type: number): EntryType | "unknown" => {
  switch (type) {
    case DT.REG:
      return "file"
    case DT.DIR:
      return "directory"
    case DT.LNK:
      return "symlink"
    case DT.UNKNOWN:
      return "unknown"
    default:
      return "other"
  }
}

/** RFC 3339 UTC with second precision (`YYYY-MM-DDTHH:MM:SSZ`), from nanoseconds since the epoch. */
export const timestampOf = (ns: bigint): string => {
  const seconds = ns >= 0n ? ns / 1_000_000_000n : (ns - 999_999_999n) / 1_000_000_000n
  return `${DateTime.formatIso(DateTime.unsafeMake(Number(seconds) * 1000)).slice(0, 19)}Z`
}
