// Attack: symlinks planted in the served tree, ".." escapes, and fds leaking
// into child processes.
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, fstat, fstatat, hasOpenat2, O, openat, openat2, RESOLVE, S } from "../src/index.js"
import { expectPosixError, makeTempDir, removeTempDir } from "./helpers.js"

let dir: string
let outside: string
let rootfd: number

beforeAll(() => {
  dir = makeTempDir()
  outside = makeTempDir("serverfs-posix-outside-")
  fs.writeFileSync(path.join(outside, "secret.txt"), "OUTSIDE-SECRET")
  fs.mkdirSync(path.join(dir, "sub"))
  fs.writeFileSync(path.join(dir, "sub", "file.txt"), "INSIDE")
  fs.symlinkSync(outside, path.join(dir, "dirlink"))
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "filelink"))
  fs.symlinkSync("sub", path.join(dir, "innerlink"))
  rootfd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
})

afterAll(() => {
  close(rootfd)
  removeTempDir(dir)
  removeTempDir(outside)
})

function readFd(fd: number): string {
  const buf = Buffer.alloc(256)
  return buf.toString("utf8", 0, fs.readSync(fd, buf, 0, buf.length, 0))
}

describe("openat", () => {
  it("walks real directories one component at a time", () => {
    const sub = openat(rootfd, "sub", O.RDONLY | O.DIRECTORY | O.NOFOLLOW)
    const file = openat(sub, "file.txt", O.RDONLY | O.NOFOLLOW)
    expect(readFd(file)).toBe("INSIDE")
    close(file)
    close(sub)
  })

  it("O_NOFOLLOW|O_DIRECTORY on a symlink fails with ENOTDIR (not ELOOP)", () => {
    // Kernel fact: with O_DIRECTORY the lookup of a trailing symlink that is
    // not followed yields a non-directory, so the "must be a directory" check
    // fires first and the error is ENOTDIR. Walkers must treat ENOTDIR, like
    // ELOOP, as "refused: not a real directory", never as "try following".
    expectPosixError(
      () => openat(rootfd, "dirlink", O.RDONLY | O.DIRECTORY | O.NOFOLLOW),
      "ENOTDIR",
      "openat"
    )
    expectPosixError(
      () => openat(rootfd, "innerlink", O.RDONLY | O.DIRECTORY | O.NOFOLLOW),
      "ENOTDIR",
      "openat"
    )
  })

  it("O_NOFOLLOW on a final symlink to a file fails with ELOOP", () => {
    expectPosixError(() => openat(rootfd, "filelink", O.RDONLY | O.NOFOLLOW), "ELOOP", "openat")
  })

  it("O_CREAT|O_EXCL does not follow a planted dangling symlink", () => {
    const target = path.join(outside, "created-through-link")
    fs.symlinkSync(target, path.join(dir, "dangling"))
    expectPosixError(
      () => openat(rootfd, "dangling", O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW, 0o600),
      "EEXIST",
      "openat"
    )
    expect(fs.existsSync(target)).toBe(false)
    fs.unlinkSync(path.join(dir, "dangling"))
  })

  it("creates with the given mode and default mode 0 is accepted", () => {
    const fd = openat(rootfd, "created", O.WRONLY | O.CREAT | O.EXCL, 0o640)
    expect(fstat(fd).mode & 0o777).toBe(0o640 & ~process.umask())
    close(fd)
    fs.unlinkSync(path.join(dir, "created"))
  })

  it("always sets O_CLOEXEC, so a spawned child does not inherit the fd", () => {
    const fd = openat(rootfd, "sub", O.RDONLY | O.DIRECTORY)
    const fdinfo = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8")
    const flags = Number.parseInt(/^flags:\s+([0-7]+)/m.exec(fdinfo)?.[1] ?? "0", 8)
    expect(flags & O.CLOEXEC).toBe(O.CLOEXEC)
    const inherited = execFileSync(
      "sh",
      ["-c", `test -e /proc/self/fd/${fd} && echo leaked || echo closed`],
      {
        encoding: "utf8"
      }
    )
    expect(inherited.trim()).toBe("closed")
    close(fd)
  })

  it("O_PATH fds can anchor a walk", () => {
    const pathfd = openat(rootfd, "sub", O.PATH | O.DIRECTORY | O.NOFOLLOW)
    const file = openat(pathfd, "file.txt", O.RDONLY | O.NOFOLLOW)
    expect(readFd(file)).toBe("INSIDE")
    close(file)
    close(pathfd)
  })
})

describe("fstatat / fstat", () => {
  it("SYMLINK_NOFOLLOW reports the link itself as S_IFLNK", () => {
    const st = fstatat(rootfd, "dirlink", AT.SYMLINK_NOFOLLOW)
    expect(st.mode & S.IFMT).toBe(S.IFLNK)
    const followed = fstatat(rootfd, "dirlink", 0)
    expect(followed.mode & S.IFMT).toBe(S.IFDIR)
  })

  it("returns bigint identity and times, numbers for the rest", () => {
    const st = fstatat(rootfd, "sub/file.txt", AT.SYMLINK_NOFOLLOW)
    const node = fs.lstatSync(path.join(dir, "sub", "file.txt"), { bigint: true })
    expect(st.mode & S.IFMT).toBe(S.IFREG)
    expect(st.dev).toBe(node.dev)
    expect(st.ino).toBe(node.ino)
    expect(st.size).toBe(6)
    expect(st.nlink).toBe(1)
    expect(st.uid).toBe(Number(node.uid))
    expect(st.gid).toBe(Number(node.gid))
    expect(st.mtimeNs).toBe(node.mtimeNs)
    expect(st.ctimeNs).toBe(node.ctimeNs)
    expect(st.atimeNs).toBe(node.atimeNs)
    expect(st.blocks).toBe(Number(node.blocks))
  })

  it("EMPTY_PATH stats the fd itself; fstat agrees", () => {
    const a = fstatat(rootfd, "", AT.EMPTY_PATH)
    const b = fstat(rootfd)
    expect(a.mode & S.IFMT).toBe(S.IFDIR)
    expect(a.ino).toBe(b.ino)
    expect(a.dev).toBe(b.dev)
  })

  it("times far outside the int64-nanosecond range do not overflow", () => {
    const p = path.join(dir, "old")
    fs.writeFileSync(p, "")
    // 1e11 s is year ~5138: sec * 1e9 overflows int64; ext4 clamps to its own
    // limit, so compare with what Node reads back.
    fs.utimesSync(p, 1e11, -1e10)
    const st = fstatat(rootfd, "old", 0)
    const node = fs.statSync(p, { bigint: true })
    expect(st.mtimeNs).toBe(node.mtimeNs)
    expect(st.atimeNs).toBe(node.atimeNs)
    fs.unlinkSync(p)
  })
})

describe("openat2", () => {
  it("is probed at load", () => {
    expect(typeof hasOpenat2).toBe("boolean")
  })

  it.skipIf(!hasOpenat2)("RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS refuses .. escapes and symlinks", () => {
    const strict = RESOLVE.BENEATH | RESOLVE.NO_SYMLINKS
    const fd = openat2(rootfd, "sub/file.txt", O.RDONLY, 0, strict)
    expect(readFd(fd)).toBe("INSIDE")
    close(fd)
    const outsideName = path.basename(outside)
    expectPosixError(
      () => openat2(rootfd, `../${outsideName}/secret.txt`, O.RDONLY, 0, strict),
      "EXDEV",
      "openat2"
    )
    expectPosixError(() => openat2(rootfd, "sub/../../etc/passwd", O.RDONLY, 0, strict), "EXDEV", "openat2")
    expectPosixError(() => openat2(rootfd, "/etc/passwd", O.RDONLY, 0, strict), "EXDEV", "openat2")
    expectPosixError(() => openat2(rootfd, "dirlink/secret.txt", O.RDONLY, 0, strict), "ELOOP", "openat2")
    expectPosixError(() => openat2(rootfd, "filelink", O.RDONLY, 0, strict), "ELOOP", "openat2")
    // Even a symlink that stays inside is refused with NO_SYMLINKS.
    expectPosixError(() => openat2(rootfd, "innerlink/file.txt", O.RDONLY, 0, strict), "ELOOP", "openat2")
    // ".." that stays beneath the root is allowed.
    const ok = openat2(rootfd, "sub/../sub/file.txt", O.RDONLY, 0, strict)
    close(ok)
  })

  it.skipIf(!hasOpenat2)("RESOLVE_BENEATH alone still refuses a symlink pointing outside", () => {
    expectPosixError(
      () => openat2(rootfd, "dirlink/secret.txt", O.RDONLY, 0, RESOLVE.BENEATH),
      "EXDEV",
      "openat2"
    )
  })

  it.skipIf(!hasOpenat2)("rejects a mode without O_CREAT (kernel EINVAL) and sets O_CLOEXEC", () => {
    expectPosixError(() => openat2(rootfd, "sub", O.RDONLY, 0o600, 0), "EINVAL", "openat2")
    const fd = openat2(rootfd, "sub", O.RDONLY | O.DIRECTORY, 0, RESOLVE.BENEATH)
    const fdinfo = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8")
    const flags = Number.parseInt(/^flags:\s+([0-7]+)/m.exec(fdinfo)?.[1] ?? "0", 8)
    expect(flags & O.CLOEXEC).toBe(O.CLOEXEC)
    close(fd)
  })
})
