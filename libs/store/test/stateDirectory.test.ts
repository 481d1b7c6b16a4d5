/**
 * The private state directory and file modes (bridge-internals §5): 0700 directory owned by
 * this uid, never a symlink; database, -wal and -shm forced to 0600; an unsafe directory is
 * refused with STATE_DIRECTORY_UNSAFE before anything is written into it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { skipWithoutRoot } from "@serverfs/testkit"
import { Cause, Effect, Exit } from "effect"
import { ResultSpool, TaskStore } from "../src/index.js"
import {
  eventLimits,
  insertRunning,
  modeOf,
  openExit,
  scopedTempState,
  type TempState,
  withStore
} from "./helpers.js"

// Two cases chown to uid 65534 to make something not ours: root only.
const withoutRoot = skipWithoutRoot("chown to uid 65534")

const unsafeMessage = (temp: TempState, exit: Exit.Exit<unknown, unknown>): string => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (!Exit.isFailure(exit)) return ""
  const failure = Cause.failureOption(exit.cause)
  expect(failure._tag).toBe("Some")
  const error = failure._tag === "Some" ? (failure.value as { _tag: string; message: string }) : undefined
  expect(error?._tag).toBe("STATE_DIRECTORY_UNSAFE")
  // ARCHITECTURE: no host path in an error message.
  expect(error?.message).not.toContain(temp.base)
  return error?.message ?? ""
}

describe("file modes", () => {
  it.scoped(
    "under umask 000 a new state dir is 0700 and db, wal, shm, results dir and result files are private",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        Effect.acquireUseRelease(
          Effect.sync(() => process.umask(0o000)),
          () =>
            withStore(
              temp.stateDir,
              Effect.gen(function* () {
                const store = yield* TaskStore
                const spool = yield* ResultSpool
                const taskId = yield* insertRunning()
                yield* store.appendEvent(taskId, "turn.started", {}, eventLimits)
                yield* spool.writeResult(taskId, "a result")
                const db = path.join(temp.stateDir, "state.sqlite3")
                expect(modeOf(temp.stateDir)).toBe(0o700)
                expect(modeOf(db)).toBe(0o600)
                expect(modeOf(`${db}-wal`)).toBe(0o600)
                expect(modeOf(`${db}-shm`)).toBe(0o600)
                expect(modeOf(path.join(temp.stateDir, "results"))).toBe(0o700)
                expect(modeOf(path.join(temp.stateDir, "results", `${taskId}.txt`))).toBe(0o600)
              })
            ),
          (previous) => Effect.sync(() => process.umask(previous))
        )
      )
  )

  it.scoped("an existing database with loose modes is forced back to 0600 on open", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        yield* withStore(temp.stateDir, insertRunning())
        const db = path.join(temp.stateDir, "state.sqlite3")
        fs.chmodSync(db, 0o644)
        if (fs.existsSync(`${db}-wal`)) fs.chmodSync(`${db}-wal`, 0o666)
        yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            yield* insertRunning()
            expect(modeOf(db)).toBe(0o600)
            expect(modeOf(`${db}-wal`)).toBe(0o600)
            expect(modeOf(`${db}-shm`)).toBe(0o600)
          })
        )
      })
    )
  )

  it.scoped("a missing state directory is created with its parents", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const nested = path.join(temp.base, "a", "b", "state")
        yield* withStore(nested, Effect.void)
        expect(fs.lstatSync(nested).isDirectory()).toBe(true)
        expect(modeOf(nested)).toBe(0o700)
      })
    )
  )
})

describe("unsafe state directories → STATE_DIRECTORY_UNSAFE", () => {
  it.scoped("world-writable", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        fs.mkdirSync(temp.stateDir, { mode: 0o700 })
        fs.chmodSync(temp.stateDir, 0o777)
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/mode 0700/)
        expect(fs.readdirSync(temp.stateDir)).toEqual([])
      })
    )
  )

  it.scoped("group-readable (0750), world-searchable (0701), owner-unwritable (0500)", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        fs.mkdirSync(temp.stateDir, { mode: 0o700 })
        for (const mode of [0o750, 0o701, 0o500]) {
          fs.chmodSync(temp.stateDir, mode)
          expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/mode 0700/)
        }
        fs.chmodSync(temp.stateDir, 0o700)
        expect(fs.readdirSync(temp.stateDir)).toEqual([])
      })
    )
  )

  it.scoped("a symlink to a perfectly private directory is not followed", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const real = path.join(temp.base, "real")
        fs.mkdirSync(real, { mode: 0o700 })
        fs.chmodSync(real, 0o700)
        fs.symlinkSync(real, temp.stateDir)
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/symbolic link/)
        expect(fs.readdirSync(real)).toEqual([])
      })
    )
  )

  it.scoped("a dangling symlink is not followed either (nothing is created at its target)", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const target = path.join(temp.base, "elsewhere")
        fs.symlinkSync(target, temp.stateDir)
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/symbolic link/)
        expect(fs.existsSync(target)).toBe(false)
      })
    )
  )

  it.scoped.skipIf(withoutRoot)("another owner (chown as root)", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        // chown to nobody makes a 0700 directory that is not ours.
        fs.mkdirSync(temp.stateDir, { mode: 0o700 })
        fs.chmodSync(temp.stateDir, 0o700)
        fs.chownSync(temp.stateDir, 65534, 65534)
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/not owned/)
        expect(fs.readdirSync(temp.stateDir)).toEqual([])
      })
    )
  )

  it.scoped("not a directory, or a relative path", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        fs.writeFileSync(temp.stateDir, "")
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/not a directory/)
        expect(unsafeMessage(temp, yield* openExit("relative/state"))).toMatch(/absolute/)
        expect(fs.existsSync(path.resolve("relative"))).toBe(false)
      })
    )
  )

  it.scoped.skipIf(withoutRoot)("a symlinked or foreign database file inside a good directory", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        fs.mkdirSync(temp.stateDir, { mode: 0o700 })
        fs.chmodSync(temp.stateDir, 0o700)
        const elsewhere = path.join(temp.base, "elsewhere.sqlite3")
        fs.writeFileSync(elsewhere, "")
        const db = path.join(temp.stateDir, "state.sqlite3")
        fs.symlinkSync(elsewhere, db)
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/not a regular file/)
        expect(fs.statSync(elsewhere).size).toBe(0)
        fs.unlinkSync(db)
        fs.writeFileSync(db, "")
        fs.chownSync(db, 65534, 65534)
        expect(unsafeMessage(temp, yield* openExit(temp.stateDir))).toMatch(/not owned/)
      })
    )
  )
})
