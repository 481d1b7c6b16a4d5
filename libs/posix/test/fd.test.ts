import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, fchmod, fchown, fstat, fsync, O, openat } from "../src/index.js"
import { expectPosixError, makeTempDir, removeTempDir } from "./helpers.js"

const isRoot = process.getuid?.() === 0

let dir: string
let rootfd: number

beforeAll(() => {
  dir = makeTempDir()
  fs.writeFileSync(path.join(dir, "f"), "data")
  rootfd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
})

afterAll(() => {
  close(rootfd)
  removeTempDir(dir)
})

describe("fsync", () => {
  it("syncs files and directories; EBADF on a closed fd", () => {
    const fd = openat(rootfd, "f", O.RDWR)
    fsync(fd)
    fsync(rootfd)
    close(fd)
    expectPosixError(() => fsync(fd), "EBADF", "fsync")
  })
})

describe("fchmod / fchown", () => {
  it("fchmod changes the mode through the fd", () => {
    const fd = openat(rootfd, "f", O.RDONLY | O.NOFOLLOW)
    fchmod(fd, 0o604)
    expect(fstat(fd).mode & 0o7777).toBe(0o604)
    fchmod(fd, 0o600)
    expect(fs.statSync(path.join(dir, "f")).mode & 0o7777).toBe(0o600)
    close(fd)
  })

  it.skipIf(!isRoot)("fchown to uid/gid 65534 works as root; -1 leaves a field unchanged", () => {
    const fd = openat(rootfd, "f", O.RDONLY | O.NOFOLLOW)
    fchown(fd, 65534, 65534)
    expect(fstat(fd)).toMatchObject({ uid: 65534, gid: 65534 })
    fchown(fd, -1, 0)
    expect(fstat(fd)).toMatchObject({ uid: 65534, gid: 0 })
    fchown(fd, 0, -1)
    expect(fstat(fd)).toMatchObject({ uid: 0, gid: 0 })
    close(fd)
  })

  it("rejects ids outside uid_t instead of wrapping them", () => {
    const fd = openat(rootfd, "f", O.RDONLY)
    expect(() => fchown(fd, 2 ** 32, 0)).toThrow(TypeError)
    expect(() => fchown(fd, -2, 0)).toThrow(TypeError)
    close(fd)
  })

  it("EBADF on a bad fd", () => {
    expectPosixError(() => fchmod(-1, 0o600), "EBADF", "fchmod")
    expectPosixError(() => fchown(-1, 0, 0), "EBADF", "fchown")
  })
})
