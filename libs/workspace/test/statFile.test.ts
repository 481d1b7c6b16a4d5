/**
 * stat_file and the revision token (tool-contracts §2.6, §6; spec v0.2 §5). The token is
 * recomputed here independently from Node's own lstat (bigint) with the documented formula.
 */
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Stat } from "@serverfs/posix"
import { Effect } from "effect"
import { revisionOf } from "../src/index.js"
import {
  defaultForbidden,
  expectCode,
  expectHygienic,
  recordedErrors,
  type Vars,
  withChannels,
  workdirVars
} from "./fixtures/channels.js"
import { buildTree, closeSockets, makeBase, removeBase } from "./fixtures/tree.js"

let base = ""
let root = ""
let vars: Vars = {}

/** The documented formula, from Node's lstat: never from the implementation. */
const documentedRevision = (p: string): string => {
  const st = fs.lstatSync(p, { bigint: true })
  const material = [st.dev, st.ino, st.mode, st.uid, st.gid, st.size, st.mtimeNs, st.ctimeNs, st.nlink].join(
    ":"
  )
  return `v1:${createHash("sha256").update(material, "ascii").digest("hex").slice(0, 16)}`
}

const REVISION = /^v1:[0-9a-f]{16}$/
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/
const past = new Date("2000-01-01T00:00:00Z")

beforeAll(async () => {
  base = makeBase("serverfs-ws-stat-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  await buildTree(root, {
    "notes.md": "# notes\n",
    "image.png": Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    "UPPER.PNG": "",
    "plain.txt": "12345",
    "data.unknownext": "x",
    noext: "x",
    "twin-a.txt": "same bytes\n",
    "twin-b.txt": "same bytes\n",
    dir: { dir: { "inside.txt": "x" } },
    link: { symlink: "plain.txt" },
    broken: { symlink: "missing" },
    fifo: { fifo: true },
    sock: { socket: true },
    mutable: { dir: {} }
  })
  fs.utimesSync(
    path.join(root, "plain.txt"),
    new Date("2024-05-06T07:08:09.999Z"),
    new Date("2024-05-06T07:08:09.999Z")
  )
  vars = workdirVars(root)
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

describe("stat_file output", () => {
  it.effect('the root ("", ".", "./") is allowed: type directory, no size, no mime, a revision', () =>
    withChannels(vars, (a) =>
      Effect.forEach(["", ".", "./", "dir/.."], (p) =>
        Effect.map(a.stat("wd", p), (s) => {
          expect(s).toMatchObject({ workdir: "wd", path: p, type: "directory", size: null, mime_type: null })
          expect(s.revision).toBe(documentedRevision(root))
          expect(s.modified_at).toMatch(TIMESTAMP)
        })
      )
    )
  )
  it.effect("a file has size and a MIME type guessed from its name (octet-stream when unknown)", () =>
    withChannels(vars, (a) =>
      Effect.forEach(
        [
          ["notes.md", "text/markdown", 8],
          ["image.png", "image/png", 4],
          ["UPPER.PNG", "image/png", 0],
          ["plain.txt", "text/plain", 5],
          ["data.unknownext", "application/octet-stream", 1],
          ["noext", "application/octet-stream", 1]
        ] as const,
        ([p, mime, size]) =>
          Effect.map(a.stat("wd", p), (s) => {
            expect(s).toMatchObject({ path: p, type: "file", size, mime_type: mime })
          })
      )
    )
  )
  it.effect("modified_at is second-precision UTC of the mtime", () =>
    withChannels(vars, (a) =>
      Effect.map(a.stat("wd", "plain.txt"), (s) => expect(s.modified_at).toBe("2024-05-06T07:08:09Z"))
    )
  )
  it.effect(
    "directories, symlinks (also broken), FIFOs and sockets: a revision, but no size and no mime",
    () =>
      withChannels(vars, (a) =>
        Effect.forEach(
          [
            ["dir", "directory"],
            ["link", "symlink"],
            ["broken", "symlink"],
            ["fifo", "other"],
            ["sock", "other"]
          ] as const,
          ([p, type]) =>
            Effect.map(a.stat("wd", p), (s) => {
              expect(s).toMatchObject({ type, size: null, mime_type: null })
              expect(s.revision).toMatch(REVISION)
              expect(s.revision).toBe(documentedRevision(path.join(root, p)))
            })
        )
      )
  )
  it.effect("errors: PATH_NOT_FOUND; a symlinked parent → SYMLINK_NOT_ALLOWED", () =>
    withChannels(vars, (a) =>
      Effect.all([
        expectCode(
          a.stat("wd", "missing"),
          "PATH_NOT_FOUND",
          "PATH_NOT_FOUND: wd:missing — no such file or directory"
        ),
        expectCode(a.stat("wd", "link/x"), "SYMLINK_NOT_ALLOWED"),
        expectCode(a.stat("wd", "plain.txt/x"), "NOT_A_DIRECTORY")
      ])
    )
  )
})

describe("the revision token", () => {
  it.effect(
    "equals the documented formula (sha256 of dev:ino:mode:uid:gid:size:mtime_ns:ctime_ns:nlink)",
    () =>
      withChannels(vars, (a) =>
        Effect.forEach(["notes.md", "plain.txt", "dir", "dir/inside.txt", "link", "fifo", "noext"], (p) =>
          Effect.map(a.stat("wd", p), (s) => {
            expect(s.revision).toMatch(REVISION)
            expect(s.revision).toBe(documentedRevision(path.join(root, p)))
          })
        )
      )
  )
  it.effect("exposes no raw inode, device or owner number", () =>
    withChannels(vars, (a) =>
      Effect.map(a.stat("wd", "plain.txt"), (s) => {
        const st = fs.lstatSync(path.join(root, "plain.txt"), { bigint: true })
        for (const n of [st.ino, st.dev]) expect(JSON.stringify(s)).not.toContain(String(n))
      })
    )
  )
  it.effect("two files with identical bytes have different revisions", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const x = yield* a.stat("wd", "twin-a.txt")
        const y = yield* a.stat("wd", "twin-b.txt")
        expect(x.revision).not.toBe(y.revision)
      })
    )
  )
  it.effect("is stable while nothing changes, and reading the file (atime) does not change it", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = path.join(root, "mutable", "atime.txt")
        fs.writeFileSync(file, "x\n")
        // An atime older than the mtime makes the next read update it, even under relatime.
        const old = fs.statSync(file)
        fs.utimesSync(file, past, old.mtime)
        const r1 = (yield* a.stat("wd", "mutable/atime.txt")).revision
        const atimeBefore = fs.statSync(file, { bigint: true }).atimeNs
        yield* a.read("wd", "mutable/atime.txt")
        fs.readFileSync(file)
        const r2 = (yield* a.stat("wd", "mutable/atime.txt")).revision
        expect(r2).toBe(r1)
        expect((yield* a.read("wd", "mutable/atime.txt")).revision).toBe(r1)
        if (fs.statSync(file, { bigint: true }).atimeNs === atimeBefore) {
          console.log("[stat] this filesystem did not update atime on read (noatime): check is vacuous here")
        }
      })
    )
  )
  it.effect("changes when the content changes", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = path.join(root, "mutable", "content.txt")
        fs.writeFileSync(file, "one\n")
        const r1 = (yield* a.stat("wd", "mutable/content.txt")).revision
        fs.appendFileSync(file, "two\n")
        const r2 = (yield* a.stat("wd", "mutable/content.txt")).revision
        expect(r2).not.toBe(r1)
        expect(r2).toBe(documentedRevision(file))
        expect((yield* a.read("wd", "mutable/content.txt")).revision).toBe(r2)
      })
    )
  )
  it.effect("changes on chmod (metadata only)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = path.join(root, "mutable", "mode.txt")
        fs.writeFileSync(file, "x", { mode: 0o644 })
        const r1 = (yield* a.stat("wd", "mutable/mode.txt")).revision
        fs.chmodSync(file, 0o600)
        const r2 = (yield* a.stat("wd", "mutable/mode.txt")).revision
        expect(r2).not.toBe(r1)
        expect(r2).toBe(documentedRevision(file))
      })
    )
  )
  it.effect("a directory's revision changes when a child is added (file or subdirectory) or removed", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const dir = path.join(root, "mutable", "parent")
        fs.mkdirSync(dir)
        // Timestamps come from a coarse kernel clock: backdate the mtime so that adding a child
        // within the same clock tick is still a visible change.
        fs.utimesSync(dir, past, past)
        const r1 = (yield* a.stat("wd", "mutable/parent")).revision
        fs.writeFileSync(path.join(dir, "child.txt"), "")
        const r2 = (yield* a.stat("wd", "mutable/parent")).revision
        expect(r2).not.toBe(r1)
        expect(r2).toBe(documentedRevision(dir))
        fs.mkdirSync(path.join(dir, "sub")) // nlink changes too
        const r3 = (yield* a.stat("wd", "mutable/parent")).revision
        expect(r3).not.toBe(r2)
        fs.utimesSync(dir, past, past)
        const r4 = (yield* a.stat("wd", "mutable/parent")).revision
        fs.unlinkSync(path.join(dir, "child.txt"))
        const r5 = (yield* a.stat("wd", "mutable/parent")).revision
        expect(r5).not.toBe(r4)
        expect(r5).toBe(documentedRevision(dir))
      })
    )
  )
  it.effect("a hard link changes the file's revision (nlink); a symlink's revision is the link's own", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = path.join(root, "mutable", "linked.txt")
        fs.writeFileSync(file, "x")
        const r1 = (yield* a.stat("wd", "mutable/linked.txt")).revision
        fs.linkSync(file, path.join(root, "mutable", "linked-2.txt"))
        const r2 = (yield* a.stat("wd", "mutable/linked.txt")).revision
        expect(r2).not.toBe(r1)
        expect(r2).toBe(documentedRevision(file))
        fs.symlinkSync("linked.txt", path.join(root, "mutable", "sym"))
        const s1 = (yield* a.stat("wd", "mutable/sym")).revision
        fs.appendFileSync(file, "more")
        const s2 = (yield* a.stat("wd", "mutable/sym")).revision
        expect(s2).toBe(s1)
        expect(s2).not.toBe((yield* a.stat("wd", "mutable/linked.txt")).revision)
      })
    )
  )
})

describe("revisionOf (the compare behind FILE_CHANGED_DURING_READ)", () => {
  const stat: Stat = {
    dev: 2049n,
    ino: 1234567n,
    mode: 0o100644,
    nlink: 1,
    uid: 1000,
    gid: 1000,
    size: 42,
    mtimeNs: 1_700_000_000_123_456_789n,
    ctimeNs: 1_700_000_000_223_456_789n,
    atimeNs: 1_700_000_000_323_456_789n,
    blocks: 8
  }
  it("is the documented formula over the nine fields", () => {
    const material = "2049:1234567:33188:1000:1000:42:1700000000123456789:1700000000223456789:1"
    expect(revisionOf(stat)).toBe(`v1:${createHash("sha256").update(material).digest("hex").slice(0, 16)}`)
  })
  it("changes when any one of the nine fields changes (a one-nanosecond mtime change included)", () => {
    const variants: ReadonlyArray<Partial<Stat>> = [
      { dev: 2050n },
      { ino: 1234568n },
      { mode: 0o100600 },
      { uid: 1001 },
      { gid: 1001 },
      { size: 43 },
      { mtimeNs: stat.mtimeNs + 1n },
      { ctimeNs: stat.ctimeNs + 1n },
      { nlink: 2 }
    ]
    const tokens = new Set([revisionOf(stat), ...variants.map((v) => revisionOf({ ...stat, ...v }))])
    expect(tokens.size).toBe(variants.length + 1)
  })
  it("does not change with atime or the block count", () => {
    expect(revisionOf({ ...stat, atimeNs: 0n, blocks: 0 })).toBe(revisionOf(stat))
  })
})

describe("hygiene", () => {
  it("no error text of this suite contains a host path, an inode number or a temp name", () => {
    expect(expectHygienic(recordedErrors(), defaultForbidden())).toBeGreaterThan(2)
  })
})
