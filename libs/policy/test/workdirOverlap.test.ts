/**
 * Overlapping workdirs (same directory under two names, nested, `/`) are a configuration error
 * unless every workdir involved is read-only with Agent delegation disabled: each workdir is its
 * own lease and read-only switch, and an overlap would let one alias write around the other's.
 */
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { inspectSlotDirectory, locateDirectory, parseServerConfiguration } from "@serverfs/policy"
import { Either } from "effect"
import { makeTempDir, removeTempDir } from "./helpers.js"

let root = ""
let outer = ""
let inner = ""
let sibling = ""
/** A symbolic link to `root`: `${viaLink}/outer` names `outer` without being a link itself. */
let viaLink = ""

beforeAll(() => {
  root = makeTempDir("serverfs-policy-overlap-")
  outer = path.join(root, "outer")
  inner = path.join(outer, "deep", "inner")
  sibling = path.join(root, "sibling")
  fs.mkdirSync(inner, { recursive: true })
  fs.mkdirSync(sibling)
  viaLink = path.join(root, "alias-link")
  fs.symlinkSync(root, viaLink)
})

afterAll(() => removeTempDir(root))

type Vars = Readonly<Record<string, string>>

const parse = (vars: Vars) =>
  parseServerConfiguration(
    (name) => (Object.hasOwn(vars, name) ? vars[name] : undefined),
    inspectSlotDirectory
  )

const slot = (n: number, alias: string, dir: string, readWrite = false): Vars => ({
  [`WORKDIR_0${n}_ALIAS`]: alias,
  [`WORKDIR_0${n}_PATH`]: dir,
  ...(readWrite ? { [`WORKDIR_0${n}_READ_ONLY`]: "false" } : {})
})

/** Agent delegation on slot n (review mode needs the bridge and a runtime). */
const delegating = (n: number): Vars => ({
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_LOCK_DIR: "/nonexistent-lock-dir",
  SERVERFS_AGENT_BRIDGE_SOCKET: "/nonexistent/bridge.sock",
  [`WORKDIR_0${n}_AGENT_MODE`]: "review",
  [`WORKDIR_0${n}_AGENT_RUNTIMES`]: "fake"
})

const refusedWith = (vars: Vars, message: string) => {
  const result = parse(vars)
  if (Either.isRight(result)) throw new Error("expected an overlap to be refused")
  expect(result.left.message).toBe(message)
  expect(result.left.message).not.toContain(root)
}

const acceptedAliases = (vars: Vars) => {
  const result = parse(vars)
  if (Either.isLeft(result)) throw new Error(`unexpected configuration error: ${result.left.message}`)
  return result.right.workdirs.map((w) => w.alias)
}

const RULE = "overlapping workdirs must all be read-only with Agent delegation disabled"

describe("overlapping workdirs → ConfigurationError naming the variables and aliases", () => {
  it("the same path twice, one read-write", () => {
    refusedWith(
      { ...slot(1, "a", outer, true), ...slot(2, "b", outer) },
      `WORKDIR_02_PATH: is the same directory as WORKDIR_01_PATH (workdir "a"); ${RULE}`
    )
  })

  it("the same directory through a symbolic link on the way", () => {
    refusedWith(
      { ...slot(1, "a", outer), ...slot(2, "b", path.join(viaLink, "outer"), true) },
      `WORKDIR_02_PATH: is the same directory as WORKDIR_01_PATH (workdir "a"); ${RULE}`
    )
  })

  it("a read-only workdir inside a read-write one", () => {
    refusedWith(
      { ...slot(1, "proj", outer, true), ...slot(2, "sub", inner) },
      `WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "proj"); ${RULE}`
    )
  })

  it("a read-write workdir that contains an earlier read-only one, named through a link", () => {
    refusedWith(
      { ...slot(1, "sub", inner), ...slot(3, "proj", path.join(viaLink, "outer"), true) },
      `WORKDIR_03_PATH: contains WORKDIR_01_PATH (workdir "sub"); ${RULE}`
    )
  })

  it("read-only but Agent-enabled nested workdirs", () => {
    refusedWith(
      { ...slot(1, "proj", outer), ...slot(2, "sub", inner), ...delegating(2) },
      `WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "proj"); ${RULE}`
    )
  })

  it("/ read-write, alone", () => {
    refusedWith(
      slot(1, "host", "/", true),
      "WORKDIR_01_PATH: is the filesystem root, which holds every other directory; it must be read-only with Agent delegation disabled"
    )
  })

  it("/ read-only with Agent delegation, alone", () => {
    refusedWith(
      { ...slot(1, "host", "/"), ...delegating(1) },
      "WORKDIR_01_PATH: is the filesystem root, which holds every other directory; it must be read-only with Agent delegation disabled"
    )
  })

  it("/ read-only next to a read-write workdir", () => {
    refusedWith(
      { ...slot(1, "host", "/"), ...slot(2, "proj", outer, true) },
      `WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "host"); ${RULE}`
    )
  })
})

describe("allowed", () => {
  it("overlaps where every workdir involved is read-only with Agent delegation disabled", () => {
    expect(
      acceptedAliases({
        ...slot(1, "a", outer),
        ...slot(2, "b", outer),
        ...slot(3, "c", inner),
        ...slot(4, "d", path.join(viaLink, "outer"))
      })
    ).toEqual(["a", "b", "c", "d"])
  })

  it("/ read-only with delegation disabled, alone or with other read-only workdirs", () => {
    expect(acceptedAliases(slot(1, "host", "/"))).toEqual(["host"])
    expect(acceptedAliases({ ...slot(1, "host", "/"), ...slot(2, "proj", outer) })).toEqual(["host", "proj"])
  })

  it("siblings, read-write and delegating", () => {
    expect(
      acceptedAliases({ ...slot(1, "a", outer, true), ...slot(2, "b", sibling, true), ...delegating(2) })
    ).toEqual(["a", "b"])
  })

  it("a read-write workdir next to a confined overlap that does not touch it", () => {
    expect(
      acceptedAliases({ ...slot(1, "a", outer), ...slot(2, "b", inner), ...slot(3, "c", sibling, true) })
    ).toEqual(["a", "b", "c"])
  })
})

describe("locateDirectory", () => {
  it("identifies a directory by device and inode, whatever its name", () => {
    const direct = locateDirectory(outer)
    const linked = locateDirectory(path.join(viaLink, "outer"))
    expect(direct?.chain[0]).toBeDefined()
    expect(linked?.chain).toEqual(direct?.chain)
    expect(locateDirectory(inner)?.chain.slice(2)).toEqual(direct?.chain)
    expect(locateDirectory("/")).toMatchObject({
      chain: [locateDirectory("/")?.chain[0]],
      isFilesystemRoot: true
    })
    expect(locateDirectory("/")?.inFilesystem?.path).toBe("/")
    expect(direct?.isFilesystemRoot).toBe(false)
    expect(locateDirectory(path.join(root, "missing"))).toBeUndefined()
  })

  const isRoot = process.getuid?.() === 0
  const mountTarget = () => {
    const target = path.join(root, `bind-${Math.random().toString(36).slice(2)}`)
    fs.mkdirSync(target)
    return target
  }
  const bind = (source: string, target: string) => spawnSync("mount", ["--bind", source, target]).status === 0
  const unmount = (target: string) => spawnSync("umount", [target])

  it.skipIf(!isRoot)("(root) the same directory through a bind mount is refused", (ctx) => {
    const target = mountTarget()
    // Inside an unprivileged container mount(2) can fail even for uid 0: then the case cannot run.
    if (!bind(outer, target)) return ctx.skip("mount --bind is not permitted here")
    try {
      refusedWith(
        { ...slot(1, "a", outer, true), ...slot(2, "b", target) },
        `WORKDIR_02_PATH: is the same directory as WORKDIR_01_PATH (workdir "a"); ${RULE}`
      )
      refusedWith(
        { ...slot(1, "a", outer, true), ...slot(2, "b", path.join(target, "deep", "inner")) },
        `WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "a"); ${RULE}`
      )
    } finally {
      unmount(target)
    }
  })

  it.skipIf(!isRoot)("(root) a bind mount of a subdirectory of a workdir is inside it", (ctx) => {
    const target = mountTarget()
    // The walk up from the mount leads to its mount point's parent, not to `outer`.
    if (!bind(inner, target)) return ctx.skip("mount --bind is not permitted here")
    try {
      refusedWith(
        { ...slot(1, "a", outer, true), ...slot(2, "b", target) },
        `WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "a"); ${RULE}`
      )
      refusedWith(
        { ...slot(1, "b", target, true), ...slot(2, "a", outer) },
        `WORKDIR_02_PATH: contains WORKDIR_01_PATH (workdir "b"); ${RULE}`
      )
      refusedWith(
        { ...slot(1, "b", target, true), ...slot(2, "c", inner) },
        `WORKDIR_02_PATH: is the same directory as WORKDIR_01_PATH (workdir "b"); ${RULE}`
      )
    } finally {
      unmount(target)
    }
  })

  it.skipIf(!isRoot)("(root) / through a bind mount is still the filesystem root", (ctx) => {
    const target = mountTarget()
    if (!bind("/", target)) return ctx.skip("mount --bind is not permitted here")
    try {
      expect(locateDirectory(target)?.isFilesystemRoot).toBe(true)
    } finally {
      unmount(target)
    }
  })
})
