// Attack: hostile file names (invalid UTF-8 crafted to collide or to decode to
// something else) and listings that disturb a descriptor the walker holds.
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, DT, fstat, mkfifoat, O, openat, readdir, readdirAsync } from "../src/index.js"
import { expectPosixError, makeTempDir, removeTempDir } from "./helpers.js"

let dir: string
let rootfd: number
let server: net.Server

const INVALID_NAMES: readonly number[][] = [
  [0x66, 0xff, 0x67], // 0xFF never appears in UTF-8
  [0x61, 0xc0, 0xaf], // overlong "/" (classic traversal trick)
  [0xe0, 0x80, 0xaf], // overlong "/" in three bytes
  [0xed, 0xa0, 0x80], // UTF-16 surrogate U+D800 encoded as UTF-8
  [0xf4, 0x90, 0x80, 0x80], // U+110000, above the Unicode range
  [0x78, 0xe2, 0x82], // truncated sequence
  [0x80, 0x79], // stray continuation byte
  [0xef, 0xbf, 0xbd, 0xff] // a real U+FFFD followed by garbage: would collide with "\uFFFD\uFFFD" lossily
]

const VALID_NAMES = [
  "plain.txt",
  "é",
  "€uro",
  "\u{1F600}",
  "\u{10FFFF}",
  "\uFFFD\uFFFD",
  "with space",
  "new\nline",
  "back\\slash"
]

beforeAll(async () => {
  dir = makeTempDir()
  for (const name of VALID_NAMES) fs.writeFileSync(path.join(dir, name), name)
  for (const bytes of INVALID_NAMES) {
    fs.writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(bytes)]), "bad")
  }
  fs.mkdirSync(path.join(dir, "subdir"))
  fs.symlinkSync("/etc", path.join(dir, "link"))
  fs.writeFileSync(path.join(dir, "subdir", "deep"), "")
  server = net.createServer()
  await new Promise<void>((resolve) => server.listen(path.join(dir, "sock"), resolve))
  rootfd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
  // Node has no mkfifo, hence the addon's.
  mkfifoat(rootfd, "fifo", 0o600)
})

afterAll(async () => {
  close(rootfd)
  await new Promise<void>((resolve) => server.close(() => resolve()))
  removeTempDir(dir)
})

function typeOf(result: ReturnType<typeof readdir>, name: string): number | undefined {
  const i = result.names.indexOf(name)
  return i < 0 ? undefined : result.types[i]
}

describe("readdir", () => {
  it("returns valid names with their d_type and skips . and ..", () => {
    const result = readdir(rootfd)
    expect([...result.names].sort()).toEqual([...VALID_NAMES, "subdir", "link", "sock", "fifo"].sort())
    expect(result.names).not.toContain(".")
    expect(result.names).not.toContain("..")
    expect(result.types).toBeInstanceOf(Uint8Array)
    expect(result.types.length).toBe(result.names.length)
    expect(typeOf(result, "plain.txt")).toBe(DT.REG)
    expect(typeOf(result, "subdir")).toBe(DT.DIR)
    expect(typeOf(result, "link")).toBe(DT.LNK)
    expect(typeOf(result, "fifo")).toBe(DT.FIFO)
    expect(typeOf(result, "sock")).toBe(DT.SOCK)
  })

  it("drops every invalid UTF-8 name and counts it", () => {
    const result = readdir(rootfd)
    expect(result.undecodable).toBe(INVALID_NAMES.length)
    // No lossy decoding: nothing containing U+FFFD except the real "\uFFFD\uFFFD" file.
    expect(result.names.filter((n) => n.includes("\uFFFD"))).toEqual(["\uFFFD\uFFFD"])
    // Node's own (lossy) readdir really does see them, so the files exist.
    expect(fs.readdirSync(dir).length).toBe(result.names.length + INVALID_NAMES.length)
  })

  it("every returned name reopens the same file it was listed as", () => {
    const result = readdir(rootfd)
    for (const name of VALID_NAMES) {
      const fd = openat(rootfd, name, O.RDONLY | O.NOFOLLOW)
      const buf = Buffer.alloc(64)
      expect(buf.toString("utf8", 0, fs.readSync(fd, buf))).toBe(name)
      close(fd)
    }
    expect(result.names).toEqual(expect.arrayContaining(VALID_NAMES))
  })

  it("does not move or close the caller's fd", () => {
    const fd = openat(rootfd, ".", O.RDONLY | O.DIRECTORY)
    const pos = () => /^pos:\s+(\d+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1]
    expect(pos()).toBe("0")
    const first = readdir(fd)
    expect(pos()).toBe("0")
    // Had it read through the caller's description, the second listing would be empty.
    const second = readdir(fd)
    expect(second.names).toEqual(first.names)
    expect(() => fstat(fd)).not.toThrow()
    close(fd)
  })

  it("accepts an O_PATH fd and lists nested directories", () => {
    const pathfd = openat(rootfd, "subdir", O.PATH | O.DIRECTORY | O.NOFOLLOW)
    const result = readdir(pathfd)
    expect(result.names).toEqual(["deep"])
    expect(Array.from(result.types)).toEqual([DT.REG])
    expect(result.undecodable).toBe(0)
    close(pathfd)
  })

  it("an empty directory gives empty results, not ['']", () => {
    fs.mkdirSync(path.join(dir, "subdir", "empty"))
    const fd = openat(rootfd, "subdir/empty", O.RDONLY | O.DIRECTORY)
    const result = readdir(fd)
    expect(result.names).toEqual([])
    expect(result.types.length).toBe(0)
    close(fd)
    fs.rmdirSync(path.join(dir, "subdir", "empty"))
  })

  it("fails with ENOTDIR on a file fd and EBADF on a bad fd", () => {
    const fd = openat(rootfd, "plain.txt", O.RDONLY)
    expectPosixError(() => readdir(fd), "ENOTDIR", "openat")
    close(fd)
    expectPosixError(() => readdir(-1), "EBADF", "openat")
  })

  it("lists a large directory quickly and completely", () => {
    const big = makeTempDir()
    try {
      // Enough entries to need several getdents64 calls (glibc reads 32 KiB at a time).
      const count = 3000
      const fd = openat(AT.FDCWD, big, O.RDONLY | O.DIRECTORY)
      for (let i = 0; i < count; i++) close(openat(fd, `f${i}`, O.WRONLY | O.CREAT | O.EXCL, 0o600))
      const start = performance.now()
      let result = readdir(fd)
      for (let i = 0; i < 9; i++) result = readdir(fd)
      const perCall = (performance.now() - start) / 10
      close(fd)
      expect(result.names.length).toBe(count)
      expect(new Set(result.names).size).toBe(count)
      expect(result.types.every((t) => t === DT.REG)).toBe(true)
      // ~1 ms here; a loose bound only catches per-entry pathologies.
      expect(perCall).toBeLessThan(100)
    } finally {
      removeTempDir(big)
    }
  })
})

describe("readdirAsync", () => {
  it("lists exactly what readdir lists, read on the thread pool", async () => {
    const sync = readdir(rootfd)
    const listed = await readdirAsync(rootfd)
    expect(listed.names).toEqual(sync.names)
    expect([...listed.types]).toEqual([...sync.types])
    expect(listed.undecodable).toBe(INVALID_NAMES.length)
  })

  it("the caller's fd may be closed while the listing runs: the worker holds its own", async () => {
    const fd = openat(AT.FDCWD, dir, O.PATH | O.DIRECTORY)
    const pending = readdirAsync(fd)
    close(fd)
    expect((await pending).names).toContain("plain.txt")
  })

  it("a non-directory fd is refused before any work is queued → ENOTDIR, no name in the error", async () => {
    const fd = openat(rootfd, "plain.txt", O.RDONLY)
    try {
      await expect(readdirAsync(fd)).rejects.toMatchObject({ code: "ENOTDIR", syscall: "openat" })
    } finally {
      close(fd)
    }
  })
})
