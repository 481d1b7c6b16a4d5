// Attack: a private directory of the bridge (socket, state, result spool, lock tree) that
// somebody else prepared for it — a symlink to a directory they control, a directory they can
// write into, one they own — must be refused before anything is created in it, and refused the
// same way by every caller.
import fs from "node:fs"
import path from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  close,
  fstat,
  openPrivateDirectorySync,
  PrivateDirectoryError,
  type PrivateDirectoryOptions,
  preparePrivateDirectory
} from "../src/index.js"
import { makeTempDir, removeTempDir } from "./helpers.js"

let base: string
beforeEach(() => {
  base = makeTempDir()
})
afterEach(() => removeTempDir(base))

const EXACT: PrivateDirectoryOptions = { mode: 0o700, existing: "exact" }
const CONFORM: PrivateDirectoryOptions = { mode: 0o700, existing: "conform" }
const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777
const isRoot = process.geteuid?.() === 0

/** The problem of a refused directory; the message never names the path. */
const refusal = (dir: string, options: PrivateDirectoryOptions): string => {
  const outcome = openPrivateDirectorySync(dir, options)
  if (!(outcome instanceof PrivateDirectoryError)) {
    close(outcome.fd)
    throw new Error("expected a refusal")
  }
  expect(outcome.message).not.toContain(base)
  return outcome.problem
}

describe("openPrivateDirectory: refusals", () => {
  it("a symlink to a perfectly private directory is not followed, for either policy", () => {
    const real = path.join(base, "real")
    fs.mkdirSync(real, { mode: 0o700 })
    fs.symlinkSync(real, path.join(base, "dir"))
    expect(refusal(path.join(base, "dir"), EXACT)).toBe("symlink")
    expect(refusal(path.join(base, "dir"), CONFORM)).toBe("symlink")
    expect(fs.readdirSync(real)).toEqual([])
  })

  it("a dangling symlink: nothing is created at its target", () => {
    fs.symlinkSync(path.join(base, "target"), path.join(base, "dir"))
    expect(refusal(path.join(base, "dir"), CONFORM)).toBe("symlink")
    expect(fs.existsSync(path.join(base, "target"))).toBe(false)
  })

  it("group-writable, world-writable and sticky world-writable are refused, never repaired", () => {
    const dir = path.join(base, "dir")
    fs.mkdirSync(dir)
    for (const mode of [0o720, 0o702, 0o770, 0o777, 0o1777]) {
      fs.chmodSync(dir, mode)
      expect(refusal(dir, CONFORM), mode.toString(8)).toBe("writable-by-others")
      expect(refusal(dir, EXACT), mode.toString(8)).toBe("writable-by-others")
      expect(modeOf(dir)).toBe(mode)
    }
  })

  it("exact: another mode is refused (0750, 0701, 0500); conform: brought to the mode", () => {
    const dir = path.join(base, "dir")
    fs.mkdirSync(dir)
    for (const mode of [0o750, 0o701, 0o500]) {
      fs.chmodSync(dir, mode)
      expect(refusal(dir, EXACT), mode.toString(8)).toBe("wrong-mode")
      expect(modeOf(dir)).toBe(mode)
    }
    fs.chmodSync(dir, 0o755)
    Effect.runSync(preparePrivateDirectory(dir, CONFORM))
    expect(modeOf(dir)).toBe(0o700)
    Effect.runSync(preparePrivateDirectory(dir, { mode: 0o750, existing: "conform" }))
    expect(modeOf(dir)).toBe(0o750)
  })

  it.skipIf(!isRoot)("a directory of another owner (needs root to chown: skipped otherwise)", () => {
    const dir = path.join(base, "dir")
    fs.mkdirSync(dir, { mode: 0o700 })
    fs.chownSync(dir, 65534, 65534)
    expect(refusal(dir, CONFORM)).toBe("foreign-owner")
    expect(fs.lstatSync(dir).uid).toBe(65534)
    expect(modeOf(dir)).toBe(0o700)
  })

  it("a regular file, a relative path, a missing directory when create is off", () => {
    fs.writeFileSync(path.join(base, "file"), "")
    expect(refusal(path.join(base, "file"), CONFORM)).toBe("not-a-directory")
    expect(refusal(path.join(base, "file", "below"), CONFORM)).toBe("not-a-directory")
    expect(refusal("relative/dir", CONFORM)).toBe("not-absolute")
    expect(fs.existsSync(path.resolve("relative"))).toBe(false)
    expect(refusal(path.join(base, "missing"), { ...EXACT, create: false })).toBe("missing")
    expect(fs.existsSync(path.join(base, "missing"))).toBe(false)
  })
})

describe("openPrivateDirectory: creation", () => {
  it("under umask 000 a new directory (and its parents) get the mode, and the fd is the directory", () => {
    const previous = process.umask(0o000)
    try {
      const dir = path.join(base, "a", "b", "dir")
      const opened = openPrivateDirectorySync(dir, { ...EXACT, parents: true })
      if (opened instanceof PrivateDirectoryError) throw opened
      try {
        expect(opened.created).toBe(true)
        const held = fstat(opened.fd)
        expect([held.dev, held.ino]).toEqual([opened.dev, opened.ino])
        expect(held.ino).toBe(BigInt(fs.statSync(dir, { bigint: true }).ino))
      } finally {
        close(opened.fd)
      }
      expect(modeOf(dir)).toBe(0o700)
      expect(modeOf(path.join(base, "a"))).toBe(0o700)
    } finally {
      process.umask(previous)
    }
  })

  it("without parents a missing parent is cannot-create; an existing private directory is kept", () => {
    expect(refusal(path.join(base, "none", "dir"), EXACT)).toBe("cannot-create")
    const dir = path.join(base, "dir")
    fs.mkdirSync(dir, { mode: 0o700 })
    fs.chmodSync(dir, 0o700)
    fs.writeFileSync(path.join(dir, "kept"), "")
    expect(Effect.runSync(preparePrivateDirectory(dir, EXACT))).toEqual({ created: false })
    expect(fs.readdirSync(dir)).toEqual(["kept"])
  })

  it("a group is set when asked (own primary group: always permitted)", () => {
    const dir = path.join(base, "dir")
    const gid = process.getgid?.() ?? 0
    Effect.runSync(preparePrivateDirectory(dir, { mode: 0o750, existing: "conform", group: gid }))
    expect(fs.lstatSync(dir).gid).toBe(gid)
    expect(modeOf(dir)).toBe(0o750)
  })
})
