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

const SECONDS_PER_DAY = 86_400
const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))
/** The last day formatted (`YYYY-MM-DDT`): the entries of one listing mostly share a few days. */
let lastDay = Number.NaN
let lastDayText = ""

/**
 * The same from whole seconds (st_mtim.tv_sec). This runs once per listed entry (issue 12), so
 * the date part comes from Date once per day and the time of day is plain arithmetic; a time
 * outside Date's range throws, as DateTime.unsafeMake did.
 */
export const timestampOfSeconds = (seconds: number): string => {
  const day = Math.floor(seconds / SECONDS_PER_DAY)
  if (day !== lastDay) {
    lastDayText = new Date(day * SECONDS_PER_DAY * 1000).toISOString().slice(0, 11)
    lastDay = day
  }
  const inDay = seconds - day * SECONDS_PER_DAY
  const hours = Math.floor(inDay / 3600)
  const minutes = Math.floor((inDay % 3600) / 60)
  return `${lastDayText}${pad2(hours)}:${pad2(minutes)}:${pad2(inDay % 60)}Z`
}
