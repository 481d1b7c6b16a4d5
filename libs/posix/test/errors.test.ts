// Attack: a client probing for host paths through error messages, and names
// smuggling a NUL byte so C truncates them to a different, unchecked name.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  AT,
  close,
  fgetxattr,
  fsetxattr,
  fstat,
  fstatat,
  isPosixError,
  linkat,
  mkdirat,
  mkfifoat,
  O,
  openat,
  openat2,
  RENAME,
  RESOLVE,
  renameat,
  renameat2,
  symlinkat,
  unlinkat
} from "../src/index.js"
import { catchError, expectInvalidArg, expectPosixError, makeTempDir, removeTempDir } from "./helpers.js"

const SECRET = "definitely-secret-name"

let dir: string
let rootfd: number

beforeAll(() => {
  dir = makeTempDir()
  fs.writeFileSync(path.join(dir, "a"), "A")
  rootfd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
})

afterAll(() => {
  close(rootfd)
  removeTempDir(dir)
})

describe("error shape", () => {
  it("openat of a missing name: code, negative errno, syscall, fixed message, no name", () => {
    const err = expectPosixError(() => openat(rootfd, SECRET, O.RDONLY), "ENOENT", "openat", [SECRET])
    expect(err.errno).toBe(-2)
    expect(err.message).toBe("ENOENT: No such file or directory, openat")
    expect(err).toBeInstanceOf(Error)
  })

  it("the directory path is not leaked either", () => {
    const err = expectPosixError(() => openat(AT.FDCWD, path.join(dir, SECRET), O.RDONLY), "ENOENT", "openat")
    expect(JSON.stringify(err)).not.toContain(dir)
    expect(String(err.stack)).not.toContain(dir)
  })

  it("every name-taking call keeps the name out of its error", () => {
    const cases: Array<[() => unknown, string, string]> = [
      [() => fstatat(rootfd, SECRET, AT.SYMLINK_NOFOLLOW), "ENOENT", "fstatat"],
      [() => openat2(rootfd, `../${SECRET}`, O.RDONLY, 0, RESOLVE.BENEATH), "EXDEV", "openat2"],
      [() => linkat(rootfd, SECRET, rootfd, `${SECRET}2`, 0), "ENOENT", "linkat"],
      [() => renameat(rootfd, SECRET, rootfd, `${SECRET}2`), "ENOENT", "renameat"],
      [() => renameat2(rootfd, SECRET, rootfd, `${SECRET}2`, RENAME.NOREPLACE), "ENOENT", "renameat2"],
      [() => unlinkat(rootfd, SECRET, 0), "ENOENT", "unlinkat"],
      [() => mkdirat(rootfd, `${SECRET}/x`, 0o700), "ENOENT", "mkdirat"],
      [() => symlinkat(SECRET, rootfd, "a"), "EEXIST", "symlinkat"],
      [() => mkfifoat(rootfd, `${SECRET}/x`, 0o600), "ENOENT", "mkfifoat"]
    ]
    for (const [fn, code, syscall] of cases) expectPosixError(fn, code, syscall, [SECRET])
  })

  it("fd-only calls report EBADF the same way", () => {
    const err = expectPosixError(() => fstat(-1), "EBADF", "fstat")
    expect(err.errno).toBe(-9)
    expectPosixError(() => close(-1), "EBADF", "close")
  })

  it("isPosixError rejects look-alikes", () => {
    expect(isPosixError(new Error("x"))).toBe(false)
    expect(isPosixError({ code: "ENOENT", errno: -2, syscall: "open" })).toBe(false)
  })
})

describe("NUL bytes are refused, never truncated", () => {
  const nul = "a\0.." // the kernel would see "a"

  it("openat does not open the prefix before the NUL", () => {
    expectInvalidArg(() => openat(rootfd, nul, O.RDONLY), nul)
    expectInvalidArg(() => openat(rootfd, `${SECRET}\0`, O.RDONLY), SECRET)
  })

  it("every string argument of every call is checked", () => {
    const value = Buffer.from("v")
    const calls: Array<() => unknown> = [
      () => openat2(rootfd, nul, O.RDONLY, 0, RESOLVE.BENEATH),
      () => fstatat(rootfd, nul, 0),
      () => linkat(rootfd, nul, rootfd, "b", 0),
      () => linkat(rootfd, "a", rootfd, "b\0", 0),
      () => renameat(rootfd, nul, rootfd, "b"),
      () => renameat(rootfd, "a", rootfd, "b\0c"),
      () => renameat2(rootfd, nul, rootfd, "b", 0),
      () => renameat2(rootfd, "a", rootfd, "b\0c", 0),
      () => unlinkat(rootfd, nul, 0),
      () => mkdirat(rootfd, "d\0e", 0o700),
      () => symlinkat("t\0u", rootfd, "l"),
      () => symlinkat("t", rootfd, "l\0m"),
      () => mkfifoat(rootfd, "f\0g", 0o600),
      () => fgetxattr(rootfd, "user.x\0y"),
      () => fsetxattr(rootfd, "user.x\0y", value, 0)
    ]
    for (const call of calls) expectInvalidArg(call)
    // Nothing happened to "a" (unlinkat/renameat would have hit it) and nothing was created.
    expect(fs.readdirSync(dir).sort()).toEqual(["a"])
    expect(fs.readFileSync(path.join(dir, "a"), "utf8")).toBe("A")
  })

  it("lone surrogates are refused instead of being replaced with U+FFFD", () => {
    fs.writeFileSync(path.join(dir, "\uFFFD"), "replacement")
    try {
      expectInvalidArg(() => openat(rootfd, "\uD800", O.RDONLY))
      expectInvalidArg(() => openat(rootfd, "x\uDC00", O.RDONLY))
      // A well-formed astral character (surrogate pair) is fine.
      expectPosixError(() => openat(rootfd, "\u{1F600}", O.RDONLY), "ENOENT", "openat")
    } finally {
      fs.unlinkSync(path.join(dir, "\uFFFD"))
    }
  })
})

describe("argument validation", () => {
  it("non-integer or out-of-range fds are a TypeError, not a wrapped fd", () => {
    const bad: unknown[] = [1.5, Number.NaN, 2 ** 32 + rootfd, "3", undefined, 10n]
    for (const fd of bad) {
      const err = catchError(() => fstat(fd as number))
      expect(err).toBeInstanceOf(TypeError)
    }
  })

  it("a non-string name is a TypeError", () => {
    const err = catchError(() => openat(rootfd, Buffer.from("a") as unknown as string, O.RDONLY))
    expect(err).toBeInstanceOf(TypeError)
    expect((err as { code?: unknown }).code).toBe("ERR_INVALID_ARG_TYPE")
  })

  it("fsetxattr wants bytes", () => {
    const fd = openat(rootfd, "a", O.RDONLY)
    try {
      const err = catchError(() => fsetxattr(fd, "user.t", "text" as unknown as Buffer, 0))
      expect(err).toBeInstanceOf(TypeError)
      const err2 = catchError(() => fsetxattr(fd, "user.t", new Uint16Array(2) as unknown as Buffer, 0))
      expect(err2).toBeInstanceOf(TypeError)
    } finally {
      close(fd)
    }
  })
})
