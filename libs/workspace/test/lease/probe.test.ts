/**
 * The probe role of the workdir lease (LeaseManager) when the lock file's fstat itself fails.
 * It used to throw the raw PosixError into the typed error channel, where the edge rendered it
 * as `undefined: EIO: …`. Now an errno failure is AGENT_LOCK_UNAVAILABLE, anything else is a
 * defect (never relabelled as a frozen code), and no descriptor stays open either way.
 */
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Configuration } from "@serverfs/policy"
import { Cause, ConfigProvider, Effect, Exit, Layer } from "effect"
import { vi } from "vitest"
import { LeaseManager } from "../../src/index.js"

const hook = vi.hoisted(() => ({
  /** Inode of the lock file whose fstat fails, and how. */
  ino: undefined as bigint | undefined,
  failure: "errno" as "errno" | "bug"
}))

vi.mock("@serverfs/posix", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@serverfs/posix")>()
  return {
    ...actual,
    fstat: (fd: number) => {
      const stat = actual.fstat(fd)
      if (hook.ino === undefined || stat.ino !== hook.ino) return stat
      if (hook.failure === "bug") throw new TypeError("a programming error inside the check")
      throw Object.assign(new Error("EIO: i/o error, fstat"), { code: "EIO", errno: -5, syscall: "fstat" })
    }
  }
})

let base = ""
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-lease-probe-"))
  fs.mkdirSync(path.join(base, "wd"))
  fs.mkdirSync(path.join(base, "locks", "active"), { recursive: true })
  fs.writeFileSync(path.join(base, "locks", "01.lock"), "")
  hook.ino = fs.statSync(path.join(base, "locks", "01.lock"), { bigint: true }).ino
})
afterEach(() => {
  hook.ino = undefined
  fs.rmSync(base, { recursive: true, force: true })
})

const openFds = () => fs.readdirSync("/proc/self/fd").length

const probe = (effect: Effect.Effect<string>) =>
  Effect.gen(function* () {
    const leases = yield* LeaseManager
    const { workdirs } = yield* Configuration
    return yield* Effect.exit(leases.hold(workdirs[0]!, effect))
  }).pipe(
    Effect.provide(
      LeaseManager.Default.pipe(
        Layer.provideMerge(Configuration.Default),
        Layer.provide(
          Layer.setConfigProvider(
            ConfigProvider.fromMap(
              new Map([
                ["WORKDIR_01_ALIAS", "wd"],
                ["WORKDIR_01_PATH", path.join(base, "wd")],
                ["WORKDIR_01_READ_ONLY", "false"],
                ["SERVERFS_AGENT_BRIDGE_ENABLED", "true"],
                ["SERVERFS_AGENT_LOCK_DIR", path.join(base, "locks")],
                // Set explicitly: this environment has no HOME for the user-scoped default.
                ["SERVERFS_AGENT_BRIDGE_SOCKET", path.join(base, "run", "bridge.sock")]
              ])
            )
          )
        )
      )
    )
  )

describe("an fstat failure on the lock file", () => {
  it.effect("errno (EIO) → AGENT_LOCK_UNAVAILABLE with its own message; the mutation never runs", () =>
    Effect.gen(function* () {
      hook.failure = "errno"
      const before = openFds()
      let ran = false
      const exit = yield* probe(
        Effect.sync(() => {
          ran = true
          return "written"
        })
      )
      expect(ran).toBe(false)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause)
        expect(failure._tag).toBe("Some")
        if (failure._tag === "Some") {
          expect(failure.value._tag).toBe("AGENT_LOCK_UNAVAILABLE")
          expect(failure.value.message).toBe("the Agent lease for wd is unavailable")
        }
      }
      expect(openFds()).toBe(before)
    })
  )

  it.effect("a programming error → a defect, not a frozen code", () =>
    Effect.gen(function* () {
      hook.failure = "bug"
      const before = openFds()
      const exit = yield* probe(Effect.succeed("written"))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.isDie(exit.cause)).toBe(true)
        expect(Cause.failureOption(exit.cause)._tag).toBe("None")
      }
      expect(openFds()).toBe(before)
    })
  )

  it.effect("without the failure the same setup holds the lease and runs the mutation", () =>
    Effect.gen(function* () {
      hook.ino = undefined
      expect(yield* probe(Effect.succeed("written"))).toEqual(Exit.succeed("written"))
    })
  )
})
