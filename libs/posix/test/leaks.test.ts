// Attack: a client driving the server into error paths until it runs out of
// descriptors (EMFILE), at which point every later request fails. Every
// error path in the addon must release what it opened.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  AT,
  close,
  fgetxattr,
  flistxattr,
  flock,
  fstat,
  fstatat,
  hasOpenat2,
  LOCK,
  O,
  openat,
  openat2,
  RESOLVE,
  readdir
} from "../src/index.js"
import { makeTempDir, openFdCount, removeTempDir } from "./helpers.js"

const ITERATIONS = 10_000

let dir: string
let rootfd: number

beforeAll(() => {
  dir = makeTempDir()
  fs.mkdirSync(path.join(dir, "sub"))
  fs.writeFileSync(path.join(dir, "sub", "f"), "x")
  fs.writeFileSync(path.join(dir, "plain"), "x")
  fs.symlinkSync("/etc", path.join(dir, "link"))
  rootfd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
})

afterAll(() => {
  close(rootfd)
  removeTempDir(dir)
})

function swallow(fn: () => unknown): void {
  try {
    fn()
  } catch {
    // expected failure
  }
}

describe("no fd leaks", () => {
  it(`${ITERATIONS} rounds of succeeding and failing calls leave /proc/self/fd unchanged`, () => {
    const plainfd = openat(rootfd, "plain", O.RDONLY)
    const before = openFdCount()
    let failures = 0
    for (let i = 0; i < ITERATIONS; i++) {
      // Succeeding.
      close(openat(rootfd, "sub", O.RDONLY | O.DIRECTORY | O.NOFOLLOW))
      readdir(rootfd)
      fstatat(rootfd, "sub/f", 0)
      if (hasOpenat2) close(openat2(rootfd, "sub/f", O.RDONLY, 0, RESOLVE.BENEATH))
      flistxattr(plainfd)
      // Failing.
      for (const fn of [
        () => openat(rootfd, "missing", O.RDONLY),
        () => openat(rootfd, "link", O.RDONLY | O.DIRECTORY | O.NOFOLLOW),
        () => readdir(plainfd), // ENOTDIR after the internal openat
        () => fstat(-1),
        () => (hasOpenat2 ? openat2(rootfd, "../x", O.RDONLY, 0, RESOLVE.BENEATH) : fstat(-1)),
        () => fgetxattr(plainfd, "user.missing"),
        () => flock(-1, LOCK.EX | LOCK.NB),
        () => openat(rootfd, "nul\0", O.RDONLY)
      ]) {
        try {
          fn()
        } catch {
          failures++
        }
      }
    }
    const after = openFdCount()
    close(plainfd)
    expect(failures).toBe(ITERATIONS * 8)
    expect(after).toBe(before)
  })

  it("readdir on a directory with entries closes its private fd (checked per call)", () => {
    const before = openFdCount()
    for (let i = 0; i < 100; i++) {
      readdir(rootfd)
      swallow(() => readdir(-1))
    }
    expect(openFdCount()).toBe(before)
  })
})
