/**
 * The held root is the directory the configuration check inspected (and compared with the other
 * workdirs for overlap): a path that names another directory by the time it is opened stops
 * startup instead of anchoring a workdir somewhere else.
 */
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Configuration, ConfigurationError, WorkdirRegistry } from "@serverfs/policy"
import { ConfigProvider, Effect, Layer } from "effect"
import { WorkdirRoots } from "../src/index.js"

let base = ""
afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

const checked = (hostPath: string) =>
  Effect.provide(
    Configuration,
    Configuration.Default.pipe(
      Layer.provide(
        Layer.setConfigProvider(
          ConfigProvider.fromMap(
            new Map([
              ["WORKDIR_01_ALIAS", "wd"],
              ["WORKDIR_01_PATH", hostPath]
            ])
          )
        )
      )
    )
  )

const rootsFrom = (config: Configuration) =>
  Effect.scoped(
    Effect.provide(
      Effect.map(WorkdirRoots, () => "opened"),
      WorkdirRoots.Default.pipe(
        Layer.provide(WorkdirRegistry.Default),
        Layer.provide(Layer.succeed(Configuration, config))
      )
    )
  )

describe("WorkdirRoots", () => {
  it.effect("opens the directory the configuration check inspected", () =>
    Effect.gen(function* () {
      base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-root-id-"))
      const wd = path.join(base, "wd")
      fs.mkdirSync(wd)
      const config = yield* checked(wd)
      expect(config.workdirs[0]?.directoryId).toMatch(/^\d+:\d+$/)
      expect(yield* rootsFrom(config)).toBe("opened")
    })
  )

  it.effect("a directory replaced between the check and the open → ConfigurationError, no path", () =>
    Effect.gen(function* () {
      base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-root-id-"))
      const wd = path.join(base, "wd")
      fs.mkdirSync(wd)
      const config = yield* checked(wd)
      fs.renameSync(wd, path.join(base, "checked"))
      fs.mkdirSync(wd)
      const error = yield* Effect.flip(rootsFrom(config))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toBe(
        "WORKDIR_01_PATH: changed during startup: it is no longer the directory the configuration check inspected"
      )
    })
  )
})
