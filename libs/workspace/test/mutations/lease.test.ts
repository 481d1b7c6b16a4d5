/**
 * The workdir lease shared with the Agent Bridge (bridge-internals §9, tool-contracts §0/§2):
 * with SERVERFS_AGENT_BRIDGE_ENABLED every mutation opens `<lock dir>/NN.lock` O_RDONLY|O_NOFOLLOW
 * and takes flock(LOCK_EX|LOCK_NB). A bridge writer holding it (a separate process here) →
 * WORKDIR_BUSY; a regular `active/NN` guard → WORKDIR_RECOVERY_REQUIRED (busy wins); a missing
 * or unsafe lock file or guard → AGENT_LOCK_UNAVAILABLE. The server never creates lock files,
 * reads never take the lease, and with the bridge disabled there is no lease at all.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import type { MutationError } from "@serverfs/domain"
import { Effect } from "effect"
import {
  type Api,
  expectCode,
  makeBase,
  mkfifo,
  removeBase,
  revisionAt,
  snapshot,
  type Vars,
  withServer
} from "./fixtures/harness.js"
import { holdLease, type LeaseHolder, lockIsFree } from "./fixtures/processes.js"

let base = ""
let root = ""
let locks = ""
const holders: LeaseHolder[] = []

beforeAll(() => {
  base = makeBase("serverfs-mut-lease-")
  root = path.join(base, "wd")
  locks = path.join(base, "locks")
  fs.mkdirSync(root)
  fs.mkdirSync(path.join(base, "ro"))
  fs.writeFileSync(path.join(root, "file.txt"), "lease target a\n")
  fs.mkdirSync(path.join(root, "emptydir"))
  fs.mkdirSync(path.join(locks, "active"), { recursive: true })
})

afterEach(async () => {
  await Promise.all(holders.splice(0).map((h) => h.release()))
  fs.rmSync(locks, { recursive: true, force: true })
  fs.mkdirSync(locks)
  fs.mkdirSync(path.join(locks, "active"))
})

afterAll(async () => {
  await Promise.all(holders.splice(0).map((h) => h.release()))
  removeBase(base)
})

/** The workdir `wd` in `slot`, with the bridge (and so the lease) enabled. */
const bridgeVars = (slot = "01", extra: Vars = {}): Vars => ({
  [`WORKDIR_${slot}_ALIAS`]: "wd",
  [`WORKDIR_${slot}_PATH`]: root,
  [`WORKDIR_${slot}_READ_ONLY`]: "false",
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_LOCK_DIR: locks,
  // Set explicitly: this environment has no HOME for the user-scoped default.
  SERVERFS_AGENT_BRIDGE_SOCKET: path.join(locks, "..", "bridge.sock"),
  ...extra
})

const lockFile = (slot = "01") => {
  const file = path.join(locks, `${slot}.lock`)
  fs.writeFileSync(file, "")
  fs.chmodSync(file, 0o444) // flock works on a read-only file opened O_RDONLY
  return file
}

const hold = (file: string) =>
  Effect.promise(async () => {
    const holder = await holdLease(file)
    holders.push(holder)
    return holder
  })

/** The five tools, each aimed at something that would succeed (or fail on the filesystem). */
const fiveCalls = (h: Api): ReadonlyArray<readonly [string, Effect.Effect<unknown, MutationError>]> => [
  ["create_text_file", h.create("new.txt", "would be created\n")],
  ["create_text_file (missing parent)", h.create("missing/new.txt", "x")],
  [
    "edit_text_file",
    h.edit("file.txt", revisionAt(path.join(root, "file.txt")), [{ old_text: "a", new_text: "b" }])
  ],
  ["delete_file", h.del("file.txt", revisionAt(path.join(root, "file.txt")))],
  ["delete_file (missing)", h.del("none.txt", "v1:0000000000000000")],
  ["create_directory", h.mkdir("newdir")],
  ["delete_directory", h.rmdir("emptydir", revisionAt(path.join(root, "emptydir")))]
]

const expectAllRefused = (h: Api, code: string, text: string) =>
  Effect.gen(function* () {
    const before = snapshot(root)
    const locksBefore = snapshot(locks)
    for (const [tool, call] of fiveCalls(h)) {
      const either = yield* Effect.either(call)
      const seen = either._tag === "Left" ? `${either.left._tag}: ${either.left.message}` : "success"
      expect(`${tool} → ${seen}`).toBe(`${tool} → ${text}`)
    }
    expect(text.startsWith(`${code}: `)).toBe(true)
    // Nothing written in the workdir, nothing created or changed in the lock directory.
    expect(snapshot(root)).toEqual(before)
    expect(snapshot(locks)).toEqual(locksBefore)
  })

const BUSY = "WORKDIR_BUSY: wd has an active Agent writer"
const RECOVERY = "WORKDIR_RECOVERY_REQUIRED: wd has unresolved Agent recovery state"
const UNAVAILABLE = "AGENT_LOCK_UNAVAILABLE: the Agent lease for wd is unavailable"

describe("the shared workdir lease (bridge enabled)", () => {
  it.live(
    "a lock held by another process → WORKDIR_BUSY on every mutation, nothing written; release lets the next through",
    () =>
      withServer(bridgeVars(), (h) =>
        Effect.gen(function* () {
          const file = lockFile()
          const holder = yield* hold(file)
          yield* expectAllRefused(h, "WORKDIR_BUSY", BUSY)
          // Reads never take the lease.
          expect((yield* h.read("file.txt")).content).toBe("lease target a\n")
          expect((yield* h.stat("file.txt")).type).toBe("file")
          expect((yield* h.list("")).entries.map((e) => e.name)).toEqual(["emptydir", "file.txt"])
          expect((yield* h.find("*.txt")).matches).toEqual([{ path: "file.txt" }])
          expect((yield* h.search("lease")).matches.map((m) => m.path)).toEqual(["file.txt"])

          yield* Effect.promise(() => holder.release())
          const made = yield* h.create("after-release.txt", "through\n")
          expect(made.created).toBe(true)
          expect(fs.readFileSync(path.join(root, "after-release.txt"), "utf8")).toBe("through\n")
          yield* h.del("after-release.txt", made.revision)
          // The mutation let go of the lock when it finished.
          expect(yield* Effect.promise(() => lockIsFree(file))).toBe(true)
        })
      )
  )

  it.live("mutations of this process serialize on the lease instead of reporting each other busy", () =>
    withServer(bridgeVars(), (h) =>
      Effect.gen(function* () {
        const file = lockFile()
        const outcomes = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) =>
            Effect.match(i % 2 === 0 ? h.create(`par-${i}.txt`, `${i}\n`) : h.mkdir(`par-${i}`), {
              onFailure: (e) => e._tag,
              onSuccess: () => "OK"
            })
          ),
          { concurrency: "unbounded" }
          // A fiber switch every 16 operations: the calls interleave throughout.
        ).pipe(Effect.withMaxOpsBeforeYield(16))
        expect(outcomes).toEqual(Array.from({ length: 12 }, () => "OK"))
        for (let i = 0; i < 12; i++) {
          const p = path.join(root, i % 2 === 0 ? `par-${i}.txt` : `par-${i}`)
          fs.rmSync(p, { recursive: true })
        }
        expect(yield* Effect.promise(() => lockIsFree(file))).toBe(true)
      })
    )
  )

  it.live("argument and policy checks come before the lease; the lease before the filesystem", () =>
    withServer(
      {
        ...bridgeVars(),
        WORKDIR_02_ALIAS: "ro",
        // A sibling: the same directory read-only beside read-write "wd" would be an overlap.
        WORKDIR_02_PATH: path.join(base, "ro"),
        WORKDIR_02_READ_ONLY: "true"
      },
      (h) =>
        Effect.gen(function* () {
          lockFile("02")
          yield* hold(lockFile())
          yield* expectCode(h.create("x.txt", "x", "ro"), "WORKDIR_READ_ONLY")
          yield* expectCode(h.create(".env", "x"), "HIDDEN_PATH_NOT_ALLOWED")
          yield* expectCode(h.create("", "x"), "ROOT_MUTATION_NOT_ALLOWED")
          yield* expectCode(h.create("x.txt", "nul\0"), "BINARY_CONTENT_NOT_ALLOWED")
          yield* expectCode(h.edit("x.txt", "r", []), "EDIT_CONFLICT")
          // A filesystem failure would be PARENT_NOT_FOUND / PATH_NOT_FOUND: the lease answers first.
          yield* expectCode(h.create("missing/x.txt", "x"), "WORKDIR_BUSY", BUSY)
          yield* expectCode(h.rmdir("none", "r"), "WORKDIR_BUSY", BUSY)
        })
    )
  )

  it.live("a guard active/01 → WORKDIR_RECOVERY_REQUIRED; busy wins when both", () =>
    withServer(bridgeVars(), (h) =>
      Effect.gen(function* () {
        const file = lockFile()
        fs.writeFileSync(path.join(locks, "active/01"), '{"schema_version":1,"slot":"01"}\n')
        yield* expectAllRefused(h, "WORKDIR_RECOVERY_REQUIRED", RECOVERY)
        // An empty or unreadable guard is still a guard.
        fs.writeFileSync(path.join(locks, "active/01"), "")
        fs.chmodSync(path.join(locks, "active/01"), 0o000)
        yield* expectCode(h.mkdir("newdir"), "WORKDIR_RECOVERY_REQUIRED", RECOVERY)
        // The recovery check also released the lock.
        expect(yield* Effect.promise(() => lockIsFree(file))).toBe(true)
        const holder = yield* hold(file)
        yield* expectAllRefused(h, "WORKDIR_BUSY", BUSY)
        yield* Effect.promise(() => holder.release())
        fs.rmSync(path.join(locks, "active/01"))
        yield* h.mkdir("newdir")
        yield* h.rmdir("newdir", revisionAt(path.join(root, "newdir")))
      })
    )
  )

  it.live(
    "a missing, symlinked, directory or FIFO lock file → AGENT_LOCK_UNAVAILABLE; the server never creates it",
    () =>
      withServer(bridgeVars(), (h) =>
        Effect.gen(function* () {
          const file = path.join(locks, "01.lock")
          yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
          expect(fs.existsSync(file)).toBe(false)
          expect(fs.readdirSync(locks)).toEqual(["active"])

          // A symlink to a perfectly good lock file is still refused (O_NOFOLLOW).
          const real = path.join(base, "real.lock")
          fs.writeFileSync(real, "")
          fs.symlinkSync(real, file)
          yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
          fs.rmSync(file)

          fs.mkdirSync(file)
          yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
          fs.rmdirSync(file)

          mkfifo(file)
          yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
          fs.rmSync(file)

          // The lock directory itself missing.
          fs.rmSync(locks, { recursive: true })
          yield* expectCode(h.create("new.txt", "x"), "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
          expect(fs.existsSync(locks)).toBe(false)
          fs.mkdirSync(path.join(locks, "active"), { recursive: true })

          // With a regular lock file, the same calls go through; the lock dir is not modified.
          lockFile()
          const locksBefore = snapshot(locks)
          const made = yield* h.create("new.txt", "now\n")
          yield* h.del("new.txt", made.revision)
          expect(snapshot(locks)).toEqual(locksBefore)
        })
      )
  )

  it.live("a FIFO, directory or symlink guard → AGENT_LOCK_UNAVAILABLE", () =>
    withServer(bridgeVars(), (h) =>
      Effect.gen(function* () {
        lockFile()
        const guard = path.join(locks, "active/01")
        mkfifo(guard)
        yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
        fs.rmSync(guard)
        fs.mkdirSync(guard)
        yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
        fs.rmdirSync(guard)
        const real = path.join(base, "real-guard")
        fs.writeFileSync(real, "{}\n")
        fs.symlinkSync(real, guard)
        yield* expectAllRefused(h, "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
        fs.rmSync(guard)
        const made = yield* h.create("guard-gone.txt", "ok\n")
        yield* h.del("guard-gone.txt", made.revision)
      })
    )
  )

  it.live("slot numbering: a workdir in slot 03 uses 03.lock and active/03, never 01", () =>
    withServer(bridgeVars("03"), (h) =>
      Effect.gen(function* () {
        // Only 01.lock exists: slot 03 has no lock file.
        const one = lockFile("01")
        yield* expectCode(h.create("slot.txt", "x"), "AGENT_LOCK_UNAVAILABLE", UNAVAILABLE)
        const three = lockFile("03")
        // 01 held and guarded: irrelevant to slot 03.
        yield* hold(one)
        fs.writeFileSync(path.join(locks, "active/01"), "{}\n")
        const made = yield* h.create("slot.txt", "slot three\n")
        const holder = yield* hold(three)
        yield* expectCode(h.del("slot.txt", made.revision), "WORKDIR_BUSY", BUSY)
        yield* Effect.promise(() => holder.release())
        fs.writeFileSync(path.join(locks, "active/03"), "{}\n")
        yield* expectCode(h.del("slot.txt", made.revision), "WORKDIR_RECOVERY_REQUIRED", RECOVERY)
        fs.rmSync(path.join(locks, "active/03"))
        yield* h.del("slot.txt", made.revision)
        expect(fs.readdirSync(locks).sort()).toEqual(["01.lock", "03.lock", "active"])
      })
    )
  )
})

describe("with the bridge disabled there is no lease", () => {
  it.live("no lock file is needed, and a held lock or a guard does not block mutations", () =>
    withServer(
      {
        WORKDIR_01_ALIAS: "wd",
        WORKDIR_01_PATH: root,
        WORKDIR_01_READ_ONLY: "false",
        SERVERFS_AGENT_BRIDGE_ENABLED: "false",
        SERVERFS_AGENT_LOCK_DIR: path.join(base, "no-such-dir")
      },
      (h) =>
        Effect.gen(function* () {
          const a = yield* h.create("free.txt", "free\n")
          yield* h.del("free.txt", a.revision)
          // The same lock dir layout that blocks an enabled bridge changes nothing here.
          yield* hold(lockFile())
          fs.writeFileSync(path.join(locks, "active/01"), "{}\n")
          const b = yield* h.create("free.txt", "still free\n")
          const c = yield* h.edit("free.txt", b.revision, [{ old_text: "still", new_text: "yes" }])
          yield* h.del("free.txt", c.revision)
          const d = yield* h.mkdir("free-dir")
          yield* h.rmdir("free-dir", d.revision)
          expect(fs.existsSync(path.join(base, "no-such-dir"))).toBe(false)
        })
    )
  )
})
