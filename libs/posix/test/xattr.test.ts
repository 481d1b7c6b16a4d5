// Attack: an adversary resizing an attribute between fgetxattr's size query
// and its read (ERANGE race), and binary values being mangled as text.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, fgetxattr, flistxattr, fremovexattr, fsetxattr, O, openat, XATTR } from "../src/index.js"
import {
  expectPosixError,
  makeTempDir,
  removeTempDir,
  spawnFixture,
  waitForExit,
  waitForLine
} from "./helpers.js"

const isRoot = process.getuid?.() === 0

let dir: string
let fd: number

beforeAll(() => {
  dir = makeTempDir()
  fs.writeFileSync(path.join(dir, "f"), "content")
  fd = openat(AT.FDCWD, path.join(dir, "f"), O.RDONLY)
})

afterAll(() => {
  close(fd)
  removeTempDir(dir)
})

describe("user.* xattrs", () => {
  it("set / list / get round-trip", () => {
    fsetxattr(fd, "user.serverfs.a", Buffer.from("hello"), 0)
    fsetxattr(fd, "user.serverfs.é", new Uint8Array([1, 2, 3]), 0)
    expect(flistxattr(fd)).toEqual(expect.arrayContaining(["user.serverfs.a", "user.serverfs.é"]))
    expect(fgetxattr(fd, "user.serverfs.a").toString()).toBe("hello")
    expect([...fgetxattr(fd, "user.serverfs.é")]).toEqual([1, 2, 3])
  })

  it("binary values survive byte for byte (NUL, 0xFF, invalid UTF-8)", () => {
    const value = Buffer.from([0x00, 0xff, 0xc0, 0xaf, 0x00, 0xed, 0xa0, 0x80, 0x7f])
    fsetxattr(fd, "user.serverfs.bin", value, 0)
    const got = fgetxattr(fd, "user.serverfs.bin")
    expect(Buffer.isBuffer(got)).toBe(true)
    expect(got.equals(value)).toBe(true)
  })

  it("a Uint8Array view writes only its own bytes", () => {
    const backing = new Uint8Array([9, 9, 1, 2, 9])
    fsetxattr(fd, "user.serverfs.view", backing.subarray(2, 4), 0)
    expect([...fgetxattr(fd, "user.serverfs.view")]).toEqual([1, 2])
  })

  it("empty and large values (beyond the first read buffer)", () => {
    fsetxattr(fd, "user.serverfs.empty", Buffer.alloc(0), 0)
    expect(fgetxattr(fd, "user.serverfs.empty").length).toBe(0)
    const large = Buffer.alloc(3000, 0x5a)
    fsetxattr(fd, "user.serverfs.large", large, 0)
    expect(fgetxattr(fd, "user.serverfs.large").equals(large)).toBe(true)
  })

  it("fremovexattr removes one attribute; a missing one is ENODATA", () => {
    fsetxattr(fd, "user.serverfs.removable", Buffer.from("x"), 0)
    expect(flistxattr(fd)).toContain("user.serverfs.removable")
    fremovexattr(fd, "user.serverfs.removable")
    expect(flistxattr(fd)).not.toContain("user.serverfs.removable")
    expectPosixError(() => fremovexattr(fd, "user.serverfs.removable"), "ENODATA", "fremovexattr", [
      "serverfs.removable"
    ])
  })

  it("missing attribute is ENODATA; CREATE / REPLACE are honoured", () => {
    expectPosixError(() => fgetxattr(fd, "user.serverfs.missing"), "ENODATA", "fgetxattr", [
      "serverfs.missing"
    ])
    expectPosixError(
      () => fsetxattr(fd, "user.serverfs.a", Buffer.from("x"), XATTR.CREATE),
      "EEXIST",
      "fsetxattr"
    )
    expectPosixError(
      () => fsetxattr(fd, "user.serverfs.missing", Buffer.from("x"), XATTR.REPLACE),
      "ENODATA",
      "fsetxattr"
    )
    fsetxattr(fd, "user.serverfs.a", Buffer.from("replaced"), XATTR.REPLACE)
    expect(fgetxattr(fd, "user.serverfs.a").toString()).toBe("replaced")
  })

  it("a list longer than the first read buffer is returned whole", () => {
    const other = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
    // ext4 keeps all of an inode's xattrs in one 4 KiB block: ~1.4 KiB of names
    // overflows the 1 KiB first read without hitting ENOSPC.
    const names = Array.from(
      { length: 30 },
      (_, i) => `user.serverfs.long-name-padding-xx-${String(i).padStart(3, "0")}`
    )
    for (const name of names) fsetxattr(other, name, Buffer.from("v"), 0)
    expect(
      flistxattr(other)
        .filter((n) => n.startsWith("user.serverfs.long"))
        .sort()
    ).toEqual(names)
    close(other)
  })

  it("unknown namespaces and bad fds fail cleanly", () => {
    expectPosixError(() => fsetxattr(fd, "bogus.ns", Buffer.from("x"), 0), "ENOTSUP", "fsetxattr")
    expectPosixError(() => flistxattr(-1), "EBADF", "flistxattr")
  })
})

describe.skipIf(!isRoot)("security.* xattrs (root on ext4)", () => {
  it("round-trip", () => {
    const value = Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00])
    fsetxattr(fd, "security.serverfs-test", value, 0)
    expect(flistxattr(fd)).toContain("security.serverfs-test")
    expect(fgetxattr(fd, "security.serverfs-test").equals(value)).toBe(true)
  })
})

describe("ERANGE race", () => {
  it("fgetxattr returns a whole value while another process keeps resizing it", async () => {
    const file = path.join(dir, "flip")
    fs.writeFileSync(file, "")
    const name = "user.serverfs.flip"
    const rfd = openat(AT.FDCWD, file, O.RDONLY)
    fsetxattr(rfd, name, Buffer.alloc(16, 0x61), 0)
    const child = spawnFixture("xattr-flipper.mjs", [file, name, "60000"])
    try {
      await waitForLine(child, "ready")
      let small = 0
      let large = 0
      const read = () => {
        // A naive size-query-then-read would throw ERANGE here whenever the
        // value grew in between; a fixed-size read would truncate.
        const v = fgetxattr(rfd, name)
        if (v.length === 16 && v.every((b) => b === 0x61)) small++
        else if (v.length === 3000 && v.every((b) => b === 0x62)) large++
        else throw new Error(`torn value of length ${v.length}`)
      }
      for (let i = 0; i < 5000; i++) read()
      // A starved flipper (loaded runner) may not have switched sizes yet.
      const deadline = Date.now() + 3000
      while ((small === 0 || large === 0) && Date.now() < deadline) read()
      // Both sizes were observed, so the value really was changing under us.
      expect(small).toBeGreaterThan(0)
      expect(large).toBeGreaterThan(0)
    } finally {
      child.kill()
      await waitForExit(child)
      close(rfd)
    }
  })
})
