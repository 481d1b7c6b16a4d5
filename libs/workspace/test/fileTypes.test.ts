/**
 * FIFOs, sockets, devices and unreadable entries (tool-contracts §2.2, §2.5, §2.6, §5).
 *
 * A FIFO without a writer would block any naive open forever: every content channel must refuse
 * it (UNSUPPORTED_FILE_TYPE) without ever opening it, so these tests could only hang, never pass,
 * against an implementation that opens first. Permission tests run as uid 65534 through
 * seteuid when the suite runs as root (root ignores file modes).
 */
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { rgPath } from "@vscode/ripgrep"
import { Effect } from "effect"
import {
  type Api,
  type ChannelError,
  defaultForbidden,
  expectCode,
  expectHygienic,
  recordedErrors,
  type Vars,
  withChannels,
  workdirVars
} from "./fixtures/channels.js"
import { buildTree, closeSockets, makeBase, openUp, removeBase } from "./fixtures/tree.js"

let base = ""
let root = ""
let vars: Vars = {}

/** Whether device nodes can be created here (root with CAP_MKNOD); decided before collection. */
const canMknod = (() => {
  const probe = makeBase("serverfs-ws-mknod-")
  try {
    execFileSync("mknod", [path.join(probe, "null"), "c", "1", "3"], { stdio: "ignore" })
    return true
  } catch {
    console.log("[file types] mknod is not permitted here: the character-device test is skipped")
    return false
  } finally {
    removeBase(probe)
  }
})()

beforeAll(async () => {
  base = makeBase("serverfs-ws-types-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  await buildTree(root, {
    "plain.txt": "NEEDLE plain\n",
    fifo: { fifo: true },
    "fifo.txt": { fifo: true },
    sock: { socket: true },
    specials: {
      dir: { "pipe.txt": { fifo: true }, "sock.txt": { socket: true }, "real.txt": "NEEDLE real\n" }
    },
    "locked.txt": "NEEDLE locked\n",
    lockeddir: { dir: { "x.txt": "NEEDLE hidden-by-mode\n" } },
    noexec: { dir: { "y.txt": "NEEDLE noexec\n" } },
    noread: { dir: { "z.txt": "NEEDLE noread\n" } }
  })
  if (canMknod) execFileSync("mknod", [path.join(root, "zero.txt"), "c", "1", "5"], { stdio: "ignore" })
  openUp(root)
  fs.chmodSync(path.join(root, "locked.txt"), 0o000)
  fs.chmodSync(path.join(root, "lockeddir"), 0o000)
  fs.chmodSync(path.join(root, "noexec"), 0o644)
  fs.chmodSync(path.join(root, "noread"), 0o311)
  // A search that opened a FIFO would block: make that a SEARCH_TIMEOUT failure, not a hang.
  vars = workdirVars(root, { SERVERFS_SEARCH_TIMEOUT_SECONDS: "10" })
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

const specials = ["fifo", "fifo.txt", "sock", "specials/pipe.txt", "specials/sock.txt"]

describe("FIFOs, sockets and devices", () => {
  it.effect("read_text_file of a FIFO (no writer) or socket → UNSUPPORTED_FILE_TYPE, without blocking", () =>
    withChannels(vars, (a) =>
      Effect.forEach(specials, (p) =>
        expectCode(
          a.read("wd", p),
          "UNSUPPORTED_FILE_TYPE",
          `UNSUPPORTED_FILE_TYPE: wd:${p} — not a regular file (FIFO, socket or device)`
        )
      )
    )
  )
  it.effect("the resource of a FIFO or socket → UNSUPPORTED_FILE_TYPE", () =>
    withChannels(vars, (a) =>
      Effect.forEach(specials, (p) => expectCode(a.resource("wd", p), "UNSUPPORTED_FILE_TYPE"))
    )
  )
  it.effect("stat_file of a FIFO or socket → type other, no size, no mime, a revision", () =>
    withChannels(vars, (a) =>
      Effect.forEach(specials, (p) =>
        Effect.map(a.stat("wd", p), (s) => {
          expect(s).toMatchObject({ type: "other", size: null, mime_type: null })
          expect(s.revision).toMatch(/^v1:[0-9a-f]{16}$/)
        })
      )
    )
  )
  it.effect("list_directory shows FIFOs and sockets as `other` with size null", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.list("wd", "specials")
        expect(r.entries.map((e) => [e.name, e.type, e.size])).toEqual([
          ["pipe.txt", "other", null],
          ["real.txt", "file", 12],
          ["sock.txt", "other", null]
        ])
        const top = yield* a.list("wd")
        expect(top.entries.filter((e) => e.type === "other").map((e) => e.name)).toEqual(
          ["fifo", "fifo.txt", "sock", ...(canMknod ? ["zero.txt"] : [])].sort()
        )
      })
    )
  )
  it.effect("find_files never matches a FIFO, socket or device", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const all = yield* a.find("wd", "*")
        const names = all.matches.map((m) => m.path)
        for (const p of [...specials, "zero.txt"]) expect(names).not.toContain(p)
        expect(names).toContain("specials/real.txt")
        expect((yield* a.find("wd", "*.txt", "specials")).matches).toEqual([{ path: "specials/real.txt" }])
      })
    )
  )
  it.effect("search_text skips FIFOs and sockets (and finishes although a FIFO has no writer)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.search("wd", "NEEDLE", "specials")
        expect(r.matches).toEqual([{ path: "specials/real.txt", line: 1, text: "NEEDLE real" }])
        const all = yield* a.search("wd", "NEEDLE")
        expect(all.matches.map((m) => m.path)).toContain("plain.txt")
        for (const m of all.matches) expect(specials).not.toContain(m.path)
      })
    )
  )
  it.effect("a FIFO or socket as the root of list/find/search, or as a parent → NOT_A_DIRECTORY", () =>
    withChannels(vars, (a) =>
      Effect.forEach(["fifo", "sock", "fifo/x", "specials/sock.txt/y"], (p) =>
        Effect.all([
          expectCode(a.list("wd", p), "NOT_A_DIRECTORY"),
          expectCode(a.find("wd", "*", p), "NOT_A_DIRECTORY"),
          expectCode(a.search("wd", "x", p), "NOT_A_DIRECTORY"),
          ...(p.includes("/") ? [expectCode(a.read("wd", p), "NOT_A_DIRECTORY")] : [])
        ])
      )
    )
  )
  it.effect.skipIf(!canMknod)(
    "a character device (/dev/zero's numbers) → UNSUPPORTED_FILE_TYPE for content, `other` for stat",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          yield* expectCode(a.read("wd", "zero.txt"), "UNSUPPORTED_FILE_TYPE")
          yield* expectCode(a.resource("wd", "zero.txt"), "UNSUPPORTED_FILE_TYPE")
          expect(yield* a.stat("wd", "zero.txt")).toMatchObject({
            type: "other",
            size: null,
            mime_type: null
          })
          const r = yield* a.search("wd", "NEEDLE")
          expect(r.matches.map((m) => m.path)).not.toContain("zero.txt")
        })
      )
  )
})

// ---- permissions ------------------------------------------------------------------------------

const isRoot = process.getuid?.() === 0
const canDrop = isRoot && process.seteuid !== undefined
if (isRoot && !canDrop) console.log("[file types] running as root without seteuid: permission tests skipped")

/**
 * Whether uid 65534 can execute ripgrep where this checkout keeps it: a checkout in a private
 * directory (mktemp -d is 0700) is not traversable by it, and search would then fail for that
 * reason alone.
 */
const rgRunsUnprivileged = ((): boolean => {
  if (!canDrop) return true
  process.seteuid!(65534)
  try {
    // stat, not access(2): access checks the real uid (root), stat walks the path as 65534.
    return (fs.statSync(rgPath).mode & 0o001) !== 0
  } catch {
    return false
  } finally {
    process.seteuid!(0)
  }
})()
if (!rgRunsUnprivileged)
  console.log(
    "[file types] uid 65534 cannot execute ripgrep in this checkout: the unprivileged search test is skipped"
  )

/** Run `effect` as uid 65534 (when root; otherwise as ourselves, where modes already apply). */
const unprivileged = <A>(effect: Effect.Effect<A, ChannelError>): Effect.Effect<A, ChannelError> =>
  isRoot
    ? Effect.acquireUseRelease(
        Effect.sync(() => process.seteuid!(65534)),
        () => effect,
        () => Effect.sync(() => process.seteuid!(0))
      )
    : effect

const denied = (a: Api, p: string, run: (a: Api) => Effect.Effect<unknown, ChannelError>) =>
  Effect.map(
    expectCode(
      unprivileged(run(a)),
      "ACCESS_DENIED",
      `ACCESS_DENIED: wd:${p} — access denied (permission denied)`
    ),
    (e) => {
      expect(e.message).not.toContain(base)
    }
  )

describe.skipIf(isRoot && !canDrop)("unreadable entries (chmod 000, checked as an unprivileged user)", () => {
  it.effect("read_text_file and the resource of a chmod-000 file → ACCESS_DENIED with a generic reason", () =>
    withChannels(vars, (a) =>
      Effect.all([
        denied(a, "locked.txt", (x) => x.read("wd", "locked.txt")),
        denied(a, "locked.txt", (x) => x.resource("wd", "locked.txt"))
      ])
    )
  )
  it.effect("a file in a chmod-000 directory → ACCESS_DENIED on read, resource and stat", () =>
    withChannels(vars, (a) =>
      Effect.all([
        denied(a, "lockeddir/x.txt", (x) => x.read("wd", "lockeddir/x.txt")),
        denied(a, "lockeddir/x.txt", (x) => x.resource("wd", "lockeddir/x.txt")),
        denied(a, "lockeddir/x.txt", (x) => x.stat("wd", "lockeddir/x.txt"))
      ])
    )
  )
  it.effect("list_directory of a chmod-000 or chmod-644 (no search bit) directory → ACCESS_DENIED", () =>
    withChannels(vars, (a) =>
      Effect.all([
        denied(a, "lockeddir", (x) => x.list("wd", "lockeddir")),
        denied(a, "noexec", (x) => x.list("wd", "noexec")),
        denied(a, "noexec/y.txt", (x) => x.read("wd", "noexec/y.txt"))
      ])
    )
  )
  it.effect(
    "find_files and search_text from an unreadable root (000, 644, 311) → ACCESS_DENIED, not an empty result",
    () =>
      withChannels(vars, (a) =>
        Effect.forEach(["lockeddir", "noexec", "noread"], (p) =>
          Effect.all([
            denied(a, p, (x) => x.list("wd", p)),
            denied(a, p, (x) => x.find("wd", "*", p)),
            denied(a, p, (x) => x.search("wd", "NEEDLE", p))
          ])
        )
      )
  )
  it.effect("metadata needs no read permission: stat and list still describe the locked entries", () =>
    withChannels(vars, (a) =>
      unprivileged(
        Effect.gen(function* () {
          expect(yield* a.stat("wd", "locked.txt")).toMatchObject({ type: "file", size: 14 })
          expect(yield* a.stat("wd", "lockeddir")).toMatchObject({ type: "directory" })
          const names = (yield* a.list("wd")).entries.map((e) => e.name)
          expect(names).toEqual(expect.arrayContaining(["locked.txt", "lockeddir"]))
        })
      )
    )
  )
  it.effect.skipIf(!rgRunsUnprivileged)(
    "find and search skip what they cannot read and still return the rest",
    () =>
      withChannels(vars, (a) =>
        unprivileged(
          Effect.gen(function* () {
            const found = (yield* a.find("wd", "*.txt")).matches.map((m) => m.path)
            expect(found).toContain("plain.txt")
            expect(found).not.toContain("lockeddir/x.txt")
            const hits = (yield* a.search("wd", "NEEDLE")).matches.map((m) => m.text).sort()
            expect(hits).toEqual(["NEEDLE plain", "NEEDLE real"])
          })
        )
      )
  )
})

describe("hygiene", () => {
  it("no error text of this suite contains a host path, an inode number or a temp name", () => {
    expect(expectHygienic(recordedErrors(), defaultForbidden())).toBeGreaterThan(20)
  })
})
