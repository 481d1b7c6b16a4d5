// fstatatEntries: a page of a listing stat'ed in one call, exactly as fstatat per name would.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, fstatat, fstatatEntries, O, openat, S } from "../src/index.js"
import { catchError, makeTempDir, removeTempDir } from "./helpers.js"

let dir: string
let dirfd: number

beforeAll(() => {
  dir = makeTempDir()
  fs.writeFileSync(path.join(dir, "file.txt"), "12345")
  fs.mkdirSync(path.join(dir, "sub"))
  fs.symlinkSync("/etc/passwd", path.join(dir, "link"))
  fs.utimesSync(
    path.join(dir, "file.txt"),
    new Date("1969-12-31T23:59:58.5Z"),
    new Date("1969-12-31T23:59:58.5Z")
  )
  dirfd = openat(-100, dir, O.DIRECTORY | O.PATH)
})

afterAll(() => {
  close(dirfd)
  removeTempDir(dir)
})

describe("fstatatEntries", () => {
  it("reports mode, size and mtime seconds like fstatat, without following a symlink", () => {
    const names = ["file.txt", "sub", "link"]
    const entries = fstatatEntries(dirfd, names, AT.SYMLINK_NOFOLLOW)
    names.forEach((name, i) => {
      const one = fstatat(dirfd, name, AT.SYMLINK_NOFOLLOW)
      const floorSeconds =
        one.mtimeNs >= 0n ? one.mtimeNs / 1_000_000_000n : (one.mtimeNs - 999_999_999n) / 1_000_000_000n
      expect(entries[i]).toEqual({ mode: one.mode, size: one.size, mtimeSeconds: Number(floorSeconds) })
    })
    expect(entries[0]!.mtimeSeconds).toBe(-2) // rounded down, as st_mtim.tv_sec is
    expect(entries[2]!.mode & S.IFMT).toBe(S.IFLNK)
  })

  it("gives undefined for a vanished name, and never stats '', '.' or '..'", () => {
    expect(
      fstatatEntries(dirfd, ["gone", "", ".", "..", "file.txt"], AT.SYMLINK_NOFOLLOW).map(
        (e) => e === undefined
      )
    ).toEqual([true, true, true, true, false])
    expect(fstatatEntries(dirfd, [], AT.SYMLINK_NOFOLLOW)).toEqual([])
  })

  it("refuses a name holding '/' or NUL, without echoing it", () => {
    for (const bad of ["sub/../file.txt", "a\0b"]) {
      const error = catchError(() => fstatatEntries(dirfd, [bad], AT.SYMLINK_NOFOLLOW)) as Error & {
        code?: string
      }
      expect(error).toBeInstanceOf(TypeError)
      expect(error.code).toBe("ERR_INVALID_ARG_VALUE")
      expect(error.message).not.toContain(bad)
    }
  })
})
