// Attack: clobbering an existing file through a "create" that is really a
// replace, and check-then-act races on directory entries.
import fs from "node:fs"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  AT,
  close,
  fstatat,
  linkat,
  mkdirat,
  mkfifoat,
  O,
  openat,
  RENAME,
  readdir,
  renameat,
  renameat2,
  S,
  symlinkat,
  unlinkat
} from "../src/index.js"
import { expectPosixError, makeTempDir, removeTempDir } from "./helpers.js"

let dir: string
let rootfd: number

beforeEach(() => {
  dir = makeTempDir()
  fs.writeFileSync(path.join(dir, "a"), "A")
  fs.writeFileSync(path.join(dir, "b"), "B")
  fs.mkdirSync(path.join(dir, "d"))
  rootfd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
})

afterEach(() => {
  close(rootfd)
  removeTempDir(dir)
})

const read = (name: string) => fs.readFileSync(path.join(dir, name), "utf8")

describe("linkat", () => {
  it("links a new name to the same inode", () => {
    linkat(rootfd, "a", rootfd, "a2", 0)
    expect(fstatat(rootfd, "a2", 0).ino).toBe(fstatat(rootfd, "a", 0).ino)
    expect(fstatat(rootfd, "a", 0).nlink).toBe(2)
  })

  it("never overwrites an existing name (EEXIST), not even a symlink", () => {
    expectPosixError(() => linkat(rootfd, "a", rootfd, "b", 0), "EEXIST", "linkat")
    expect(read("b")).toBe("B")
    fs.symlinkSync("/nonexistent-target", path.join(dir, "l"))
    expectPosixError(() => linkat(rootfd, "a", rootfd, "l", 0), "EEXIST", "linkat")
    expect(fs.readlinkSync(path.join(dir, "l"))).toBe("/nonexistent-target")
  })

  it("links a symlink as the symlink itself (flags 0 does not follow)", () => {
    fs.symlinkSync("/etc/passwd", path.join(dir, "l"))
    linkat(rootfd, "l", rootfd, "l2", 0)
    expect(fstatat(rootfd, "l2", AT.SYMLINK_NOFOLLOW).mode & S.IFMT).toBe(S.IFLNK)
  })

  it("works across held directory fds", () => {
    const dfd = openat(rootfd, "d", O.RDONLY | O.DIRECTORY | O.NOFOLLOW)
    linkat(rootfd, "a", dfd, "inner", 0)
    close(dfd)
    expect(read("d/inner")).toBe("A")
  })
})

describe("renameat / renameat2", () => {
  it("renameat replaces the destination atomically", () => {
    renameat(rootfd, "a", rootfd, "b")
    expect(read("b")).toBe("A")
    expect(fs.existsSync(path.join(dir, "a"))).toBe(false)
  })

  it("RENAME_NOREPLACE refuses an existing destination", () => {
    expectPosixError(() => renameat2(rootfd, "a", rootfd, "b", RENAME.NOREPLACE), "EEXIST", "renameat2")
    expect(read("a")).toBe("A")
    expect(read("b")).toBe("B")
    renameat2(rootfd, "a", rootfd, "c", RENAME.NOREPLACE)
    expect(read("c")).toBe("A")
  })

  it("RENAME_EXCHANGE swaps two entries, including a file and a directory", () => {
    renameat2(rootfd, "a", rootfd, "b", RENAME.EXCHANGE)
    expect(read("a")).toBe("B")
    expect(read("b")).toBe("A")
    renameat2(rootfd, "a", rootfd, "d", RENAME.EXCHANGE)
    expect(read("d")).toBe("B")
    expect(fs.statSync(path.join(dir, "a")).isDirectory()).toBe(true)
  })

  it("RENAME_EXCHANGE needs both entries to exist", () => {
    expectPosixError(() => renameat2(rootfd, "a", rootfd, "missing", RENAME.EXCHANGE), "ENOENT", "renameat2")
  })

  it("NOREPLACE|EXCHANGE together is EINVAL", () => {
    expectPosixError(
      () => renameat2(rootfd, "a", rootfd, "b", RENAME.NOREPLACE | RENAME.EXCHANGE),
      "EINVAL",
      "renameat2"
    )
  })
})

describe("mkdirat / unlinkat", () => {
  it("mkdirat creates with the mode and refuses existing entries, including symlinks", () => {
    mkdirat(rootfd, "new", 0o750)
    const st = fstatat(rootfd, "new", AT.SYMLINK_NOFOLLOW)
    expect(st.mode & S.IFMT).toBe(S.IFDIR)
    expect(st.mode & 0o777).toBe(0o750 & ~process.umask())
    expectPosixError(() => mkdirat(rootfd, "new", 0o700), "EEXIST", "mkdirat")
    fs.symlinkSync(path.join(dir, "nowhere"), path.join(dir, "l"))
    expectPosixError(() => mkdirat(rootfd, "l", 0o700), "EEXIST", "mkdirat")
    expect(fs.existsSync(path.join(dir, "nowhere"))).toBe(false)
  })

  it("unlinkat removes files; REMOVEDIR removes empty directories only", () => {
    unlinkat(rootfd, "a", 0)
    expect(fs.existsSync(path.join(dir, "a"))).toBe(false)
    expectPosixError(() => unlinkat(rootfd, "d", 0), "EISDIR", "unlinkat")
    expectPosixError(() => unlinkat(rootfd, "b", AT.REMOVEDIR), "ENOTDIR", "unlinkat")
    fs.writeFileSync(path.join(dir, "d", "x"), "")
    expectPosixError(() => unlinkat(rootfd, "d", AT.REMOVEDIR), "ENOTEMPTY", "unlinkat")
    fs.unlinkSync(path.join(dir, "d", "x"))
    unlinkat(rootfd, "d", AT.REMOVEDIR)
    expect(fs.existsSync(path.join(dir, "d"))).toBe(false)
  })

  it("unlinkat of a symlink removes the link, not its target", () => {
    fs.symlinkSync(path.join(dir, "b"), path.join(dir, "l"))
    unlinkat(rootfd, "l", 0)
    expect(read("b")).toBe("B")
  })
})

describe("symlinkat / mkfifoat", () => {
  it("symlinkat stores the target verbatim without resolving it", () => {
    symlinkat("../../../etc/shadow", rootfd, "evil")
    expect(fs.readlinkSync(path.join(dir, "evil"))).toBe("../../../etc/shadow")
    expectPosixError(() => symlinkat("x", rootfd, "evil"), "EEXIST", "symlinkat")
  })

  it("mkfifoat creates a FIFO that readdir and fstatat identify without opening it", () => {
    mkfifoat(rootfd, "fifo", 0o600)
    expect(fstatat(rootfd, "fifo", AT.SYMLINK_NOFOLLOW).mode & S.IFMT).toBe(S.IFIFO)
    const { names } = readdir(rootfd)
    expect(names).toContain("fifo")
    expectPosixError(() => mkfifoat(rootfd, "fifo", 0o600), "EEXIST", "mkfifoat")
  })
})
