/**
 * The holder role of the workdir lease (bridge-internals §9), attacked directly: a lock tree or
 * lock file somebody else prepared, a guard that is garbage, oversized or not a file. Every
 * refusal is LOCK_PATH_UNSAFE with no path in its message; a malformed guard still blocks
 * writers (fail closed) but is never taken for a valid one.
 */
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { AT, close, flock, isWouldBlock, LOCK, mkfifoat, O, openat } from "@serverfs/posix"
import { Effect, Exit, Scope } from "effect"
import { MAX_GUARD_BYTES, makeLeaseHolder, type RecoveryGuard } from "../../src/index.js"

let base = ""
let lockDir = ""
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-lease-holder-"))
  lockDir = path.join(base, "locks")
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

const isRoot = process.geteuid?.() === 0
const holder = () => makeLeaseHolder({ lockDir, peerGid: null })
const lockFile = (slot: number) => path.join(lockDir, `${String(slot).padStart(2, "0")}.lock`)
const guardFile = (slot: number) => path.join(lockDir, "active", String(slot).padStart(2, "0"))
const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777

const guard = (slot: number, taskId = "agt_000000000000000000000001"): RecoveryGuard => ({
  schema_version: 1,
  slot,
  task_id: taskId,
  runtime: "fake",
  workdir_alias: "w1",
  correlation_id: null,
  native_session_id: null,
  native_turn_id: null,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z"
})

/** The failure of a holder start, checked to be LOCK_PATH_UNSAFE without a host path. */
const startRefused = Effect.gen(function* () {
  const exit = yield* Effect.exit(Effect.scoped(holder()))
  expect(Exit.isFailure(exit)).toBe(true)
  const error = yield* Effect.flip(Effect.scoped(holder()))
  expect(error._tag).toBe("LOCK_PATH_UNSAFE")
  expect(error.message).not.toContain(base)
  return error.message
})

/** Can another descriptor take the slot's flock right now? */
const flockFree = (slot: number): boolean => {
  const fd = openat(AT.FDCWD, lockFile(slot), O.RDONLY | O.NOFOLLOW)
  try {
    flock(fd, LOCK.EX | LOCK.NB)
    return true
  } catch (error) {
    if (isWouldBlock(error)) return false
    throw error
  } finally {
    close(fd)
  }
}

describe("the lock tree at start", () => {
  it.effect("a fresh tree: 0700 directories, sixteen 0600 lock files, nothing else", () =>
    Effect.gen(function* () {
      yield* Effect.scoped(holder())
      expect(modeOf(lockDir)).toBe(0o700)
      expect(modeOf(path.join(lockDir, "active"))).toBe(0o700)
      expect(fs.readdirSync(path.join(lockDir, "active"))).toEqual([])
      for (let slot = 1; slot <= 16; slot++) expect(modeOf(lockFile(slot))).toBe(0o600)
    })
  )

  it.effect("shared mode: 0750/0640 in the peer group; back to private mode: 0700/0600 again", () =>
    Effect.gen(function* () {
      const peerGid = isRoot ? 65534 : (process.getgid?.() ?? 0)
      yield* Effect.scoped(makeLeaseHolder({ lockDir, peerGid }))
      expect([modeOf(lockDir), fs.lstatSync(lockDir).gid]).toEqual([0o750, peerGid])
      expect([modeOf(path.join(lockDir, "active")), fs.lstatSync(path.join(lockDir, "active")).gid]).toEqual([
        0o750,
        peerGid
      ])
      expect([modeOf(lockFile(7)), fs.lstatSync(lockFile(7)).gid]).toEqual([0o640, peerGid])
      const leases = yield* Effect.scoped(
        Effect.flatMap(makeLeaseHolder({ lockDir, peerGid }), (shared) =>
          Effect.as(shared.writeGuard(guard(7)), shared)
        )
      )
      expect(leases.holds(7)).toBe(false)
      expect([modeOf(guardFile(7)), fs.lstatSync(guardFile(7)).gid]).toEqual([0o640, peerGid])
      fs.unlinkSync(guardFile(7))
      yield* Effect.scoped(holder())
      expect(modeOf(lockDir)).toBe(0o700)
      expect(modeOf(path.join(lockDir, "active"))).toBe(0o700)
      expect(modeOf(lockFile(7))).toBe(0o600)
    })
  )

  it.effect("a symlinked lock directory is refused, nothing is created at its target", () =>
    Effect.gen(function* () {
      const real = path.join(base, "real")
      fs.mkdirSync(real, { mode: 0o700 })
      fs.symlinkSync(real, lockDir)
      expect(yield* startRefused).toMatch(/not a directory/)
      expect(fs.readdirSync(real)).toEqual([])
    })
  )

  it.effect("a group-writable lock directory or active/ is refused, not repaired", () =>
    Effect.gen(function* () {
      fs.mkdirSync(lockDir, { mode: 0o700 })
      fs.chmodSync(lockDir, 0o770)
      expect(yield* startRefused).toMatch(/group- or world-writable/)
      expect(modeOf(lockDir)).toBe(0o770)
      fs.chmodSync(lockDir, 0o700)
      fs.mkdirSync(path.join(lockDir, "active"))
      fs.chmodSync(path.join(lockDir, "active"), 0o777)
      expect(yield* startRefused).toMatch(/group- or world-writable/)
    })
  )

  it.effect.skipIf(!isRoot)("a lock directory of another owner (root only: chown to nobody)", () =>
    Effect.gen(function* () {
      fs.mkdirSync(lockDir, { mode: 0o700 })
      fs.chownSync(lockDir, 65534, 65534)
      expect(yield* startRefused).toMatch(/owned by another user/)
      expect(fs.readdirSync(lockDir)).toEqual([])
    })
  )

  it.effect("a lock file replaced by a symlink, a FIFO or a hard link is refused", () =>
    Effect.gen(function* () {
      yield* Effect.scoped(holder())
      const elsewhere = path.join(base, "elsewhere")
      fs.writeFileSync(elsewhere, "")
      fs.chmodSync(elsewhere, 0o644)

      fs.unlinkSync(lockFile(2))
      fs.symlinkSync(elsewhere, lockFile(2))
      expect(yield* startRefused).toMatch(/02\.lock cannot be opened/)
      expect(modeOf(elsewhere)).toBe(0o644)

      fs.unlinkSync(lockFile(2))
      const dir = openat(AT.FDCWD, lockDir, O.RDONLY | O.DIRECTORY)
      mkfifoat(dir, "02.lock", 0o600)
      close(dir)
      // O_NONBLOCK: the FIFO does not hang the open; it is refused by its type.
      expect(yield* startRefused).toMatch(/02\.lock is not a plain file/)

      fs.unlinkSync(lockFile(2))
      fs.linkSync(lockFile(3), lockFile(2))
      expect(yield* startRefused).toMatch(/02\.lock is not a plain file/)
    })
  )
})

describe("acquire and release", () => {
  it.scoped(
    "a held slot is flock'ed until release; a second acquire is WORKDIR_BUSY; the scope frees all",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const leases = yield* Scope.extend(holder(), scope)
        yield* leases.acquire(1, "w1")
        yield* leases.acquire(2, "w2")
        expect(flockFree(1)).toBe(false)
        expect(leases.holds(1)).toBe(true)
        expect((yield* Effect.flip(leases.acquire(1, "w1")))._tag).toBe("WORKDIR_BUSY")
        yield* leases.release(1)
        expect(flockFree(1)).toBe(true)
        expect(leases.holds(1)).toBe(false)
        yield* Scope.close(scope, Exit.void)
        expect(flockFree(2)).toBe(true)
      })
  )

  it.scoped(
    "a lock file held by another process → WORKDIR_BUSY; swapped for a symlink → LOCK_PATH_UNSAFE",
    () =>
      Effect.gen(function* () {
        const leases = yield* holder()
        const other = openat(AT.FDCWD, lockFile(1), O.RDONLY)
        flock(other, LOCK.EX | LOCK.NB)
        expect((yield* Effect.flip(leases.acquire(1, "w1")))._tag).toBe("WORKDIR_BUSY")
        close(other)
        fs.unlinkSync(lockFile(1))
        fs.symlinkSync(lockFile(3), lockFile(1))
        const unsafe = yield* Effect.flip(leases.acquire(1, "w1"))
        expect(unsafe._tag).toBe("LOCK_PATH_UNSAFE")
        expect(unsafe.message).not.toContain(base)
        expect(leases.holds(1)).toBe(false)
        expect(flockFree(3)).toBe(true)
      })
  )
})

describe("the recovery guard file", () => {
  it.scoped(
    "published as canonical JSON, read back valid; a second publish → WORKDIR_RECOVERY_REQUIRED",
    () =>
      Effect.gen(function* () {
        const leases = yield* holder()
        yield* leases.publishGuard(guard(1))
        expect(modeOf(guardFile(1))).toBe(0o600)
        expect(yield* leases.readGuard(1)).toEqual({ _tag: "valid", guard: guard(1) })
        expect((yield* Effect.flip(leases.publishGuard(guard(1))))._tag).toBe("WORKDIR_RECOVERY_REQUIRED")
        expect(yield* leases.validGuards()).toEqual([{ slot: 1, guard: guard(1) }])
        yield* leases.removeGuard(1)
        yield* leases.removeGuard(1)
        expect(yield* leases.readGuard(1)).toEqual({ _tag: "none" })
        expect(fs.readdirSync(path.join(lockDir, "active"))).toEqual([])
      })
  )

  it.scoped(
    "garbage, wrong shape, another slot's guard, oversized JSON, a FIFO, a symlink: invalid, and still blocking",
    () =>
      Effect.gen(function* () {
        const leases = yield* holder()
        const valid = `${JSON.stringify(guard(1))}\n`
        const padded = JSON.stringify({ ...guard(1), runtime: "x".repeat(MAX_GUARD_BYTES) })
        const plants: ReadonlyArray<readonly [string, () => void]> = [
          ["garbage", () => fs.writeFileSync(guardFile(1), "{not json")],
          ["empty", () => fs.writeFileSync(guardFile(1), "")],
          [
            "wrong shape",
            () => fs.writeFileSync(guardFile(1), JSON.stringify({ ...guard(1), schema_version: 2 }))
          ],
          ["another slot", () => fs.writeFileSync(guardFile(1), JSON.stringify(guard(2)))],
          ["oversized", () => fs.writeFileSync(guardFile(1), padded)],
          [
            "fifo",
            () => {
              const dir = openat(AT.FDCWD, path.join(lockDir, "active"), O.RDONLY | O.DIRECTORY)
              mkfifoat(dir, "01", 0o600)
              close(dir)
            }
          ],
          [
            "symlink to a valid guard",
            () => {
              fs.writeFileSync(path.join(base, "planted"), valid)
              fs.symlinkSync(path.join(base, "planted"), guardFile(1))
            }
          ]
        ]
        for (const [name, plant] of plants) {
          plant()
          expect(yield* leases.readGuard(1), name).toEqual({ _tag: "invalid" })
          expect(yield* leases.validGuards(), name).toEqual([])
          expect((yield* Effect.flip(leases.publishGuard(guard(1))))._tag, name).toBe(
            "WORKDIR_RECOVERY_REQUIRED"
          )
          fs.unlinkSync(guardFile(1))
        }
        fs.writeFileSync(guardFile(1), valid)
        expect((yield* leases.readGuard(1))._tag).toBe("valid")
      })
  )
})
