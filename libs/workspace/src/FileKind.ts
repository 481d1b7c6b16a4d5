import type { EntryType } from "@serverfs/domain"
import { DT, S, type Stat } from "@serverfs/posix"

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
export const timestampOf = (ns: bigint): string =>
  timestampOfSeconds(Number(ns >= 0n ? ns / 1_000_000_000n : (ns - 999_999_999n) / 1_000_000_000n))

/**
 * The same from whole seconds (st_mtim.tv_sec). A plain Date, not effect's DateTime: this runs
 * once per listed entry, and the ISO text is the same (a time outside Date's range throws, as
 * DateTime.unsafeMake did).
 */
export const timestampOfSeconds = (seconds: number): string =>
  `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`
