// Attack: two server instances (or a server and an operator tool) mutating the
// same state at once. flock must exclude another PROCESS, not just another fd.
// The main test thread never calls a blocking flock on a held lock: that would
// freeze the event loop and hang the run.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, flock, isWouldBlock, LOCK, O, openat } from "../src/index.js"
import {
  catchError,
  expectPosixError,
  makeTempDir,
  removeTempDir,
  spawnFixture,
  waitForExit,
  waitForLine
} from "./helpers.js"

let dir: string
let lockPath: string

beforeAll(() => {
  dir = makeTempDir()
  lockPath = path.join(dir, "lock")
  fs.writeFileSync(lockPath, "")
})

afterAll(() => removeTempDir(dir))

function tryLock(fd: number, op: number): "acquired" | "would-block" {
  try {
    flock(fd, op | LOCK.NB)
    return "acquired"
  } catch (err) {
    if (isWouldBlock(err)) return "would-block"
    throw err
  }
}

describe("flock", () => {
  it("LOCK_EX held by another process excludes us until it releases", async () => {
    const child = spawnFixture("flock-holder.mjs", [lockPath])
    try {
      await waitForLine(child, "locked")
      const fd = openat(AT.FDCWD, lockPath, O.RDONLY)
      try {
        expect(tryLock(fd, LOCK.EX)).toBe("would-block")
        expect(tryLock(fd, LOCK.SH)).toBe("would-block")
        const err = catchError(() => flock(fd, LOCK.EX | LOCK.NB))
        expect((err as { code?: string }).code).toMatch(/^(EAGAIN|EWOULDBLOCK)$/)
        expect((err as { syscall?: string }).syscall).toBe("flock")

        child.stdin?.write("release\n")
        await waitForLine(child, "released")
        expect(tryLock(fd, LOCK.EX)).toBe("acquired")
        flock(fd, LOCK.UN)
      } finally {
        close(fd)
      }
    } finally {
      child.stdin?.end()
      await waitForExit(child)
    }
  })

  it("a lock dies with its holder process", async () => {
    const child = spawnFixture("flock-holder.mjs", [lockPath])
    await waitForLine(child, "locked")
    const fd = openat(AT.FDCWD, lockPath, O.RDONLY)
    try {
      expect(tryLock(fd, LOCK.EX)).toBe("would-block")
      child.kill("SIGKILL")
      await waitForExit(child)
      expect(tryLock(fd, LOCK.EX)).toBe("acquired")
    } finally {
      close(fd)
    }
  })

  it("two open file descriptions in one process also exclude each other; shared locks coexist", () => {
    const a = openat(AT.FDCWD, lockPath, O.RDONLY)
    const b = openat(AT.FDCWD, lockPath, O.RDONLY)
    try {
      flock(a, LOCK.EX)
      expect(tryLock(b, LOCK.EX)).toBe("would-block")
      flock(a, LOCK.UN)
      flock(a, LOCK.SH)
      expect(tryLock(b, LOCK.SH)).toBe("acquired")
      expect(tryLock(b, LOCK.EX)).toBe("would-block")
    } finally {
      close(a)
      close(b)
    }
  })

  it("closing the fd releases the lock", () => {
    const a = openat(AT.FDCWD, lockPath, O.RDONLY)
    const b = openat(AT.FDCWD, lockPath, O.RDONLY)
    flock(a, LOCK.EX)
    close(a)
    expect(tryLock(b, LOCK.EX)).toBe("acquired")
    close(b)
  })

  it("isWouldBlock recognises both spellings and nothing else", () => {
    const mk = (code: string) => Object.assign(new Error(code), { code, errno: -11, syscall: "flock" })
    expect(isWouldBlock(mk("EAGAIN"))).toBe(true)
    expect(isWouldBlock(mk("EWOULDBLOCK"))).toBe(true)
    expect(isWouldBlock(mk("EBADF"))).toBe(false)
    expect(isWouldBlock({ code: "EAGAIN" })).toBe(false)
    expect(isWouldBlock(undefined)).toBe(false)
  })

  it("EBADF / EINVAL surface as errors", () => {
    expectPosixError(() => flock(-1, LOCK.EX | LOCK.NB), "EBADF", "flock")
    const fd = openat(AT.FDCWD, lockPath, O.RDONLY)
    expectPosixError(() => flock(fd, 0), "EINVAL", "flock")
    close(fd)
  })
})
