/**
 * The instance lock file `bridge.lock` goes through the lease's one lock-file open (O_NOFOLLOW,
 * O_NONBLOCK, regular, one link, ours): one planted as a symlink, a FIFO or a hard link stops
 * the bridge with its directory's code and no host path, and the planted target is untouched.
 * In process: the layer alone, before anything else of the bridge is built.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Configuration } from "@serverfs/policy"
import { AT, close, mkfifoat, O, openat } from "@serverfs/posix"
import { ConfigProvider, Effect, Layer } from "effect"
import { InstanceLockLive } from "../src/InstanceLock.js"
import { BridgeSettingsTag } from "../src/index.js"
import { makeSandbox, type Sandbox } from "./support/daemon.js"

let sandbox: Sandbox | undefined
afterEach(() => sandbox?.remove())

const start = (box: Sandbox) =>
  Layer.build(InstanceLockLive).pipe(
    Effect.scoped,
    Effect.provide(
      BridgeSettingsTag.layer.pipe(
        Layer.provideMerge(Configuration.Default),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(box.env())))))
      )
    )
  )

const startRefusal = (box: Sandbox) =>
  Effect.flip(start(box)).pipe(
    Effect.tap((error) => {
      expect(error.message).not.toContain(box.base)
    })
  )

const mkfifo = (file: string) => {
  const dir = openat(AT.FDCWD, path.dirname(file), O.RDONLY | O.DIRECTORY)
  try {
    mkfifoat(dir, path.basename(file), 0o600)
  } finally {
    close(dir)
  }
}

describe("a planted bridge.lock", () => {
  it.effect("in the state directory: a symlink, a FIFO, a hard link → STATE_DIRECTORY_UNSAFE", () =>
    Effect.gen(function* () {
      const box = makeSandbox([{ slot: 1, alias: "w1" }])
      sandbox = box
      fs.mkdirSync(box.stateDir, { mode: 0o700 })
      const lock = path.join(box.stateDir, "bridge.lock")
      const target = path.join(box.base, "target")
      fs.writeFileSync(target, "")
      fs.chmodSync(target, 0o644)

      fs.symlinkSync(target, lock)
      let refused = yield* startRefusal(box)
      expect([refused._tag, refused.message]).toEqual([
        "STATE_DIRECTORY_UNSAFE",
        "the state directory's instance lock cannot be opened"
      ])
      expect(fs.lstatSync(target).mode & 0o777).toBe(0o644)

      fs.unlinkSync(lock)
      mkfifo(lock)
      refused = yield* startRefusal(box)
      expect(refused.message).toBe("the state directory's instance lock is not a private regular file")

      fs.unlinkSync(lock)
      fs.linkSync(target, lock)
      refused = yield* startRefusal(box)
      expect(refused.message).toBe("the state directory's instance lock is not a private regular file")
      expect(fs.lstatSync(target).mode & 0o777).toBe(0o644)
    })
  )

  it.effect("in the lock directory: a symlink → LOCK_PATH_UNSAFE; removed, the layer builds", () =>
    Effect.gen(function* () {
      const box = makeSandbox([{ slot: 1, alias: "w1" }])
      sandbox = box
      fs.mkdirSync(box.lockDir, { mode: 0o700 })
      const lock = path.join(box.lockDir, "bridge.lock")
      fs.symlinkSync(path.join(box.base, "nowhere"), lock)
      const refused = yield* startRefusal(box)
      expect([refused._tag, refused.message]).toEqual([
        "LOCK_PATH_UNSAFE",
        "the lock directory's instance lock cannot be opened"
      ])
      expect(fs.existsSync(path.join(box.base, "nowhere"))).toBe(false)
      fs.unlinkSync(lock)
      yield* start(box)
      expect(fs.lstatSync(lock).isFile()).toBe(true)
    })
  )
})
