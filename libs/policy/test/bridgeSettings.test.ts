/**
 * The bridge's own settings (tool-contracts §4, bridge-internals §3): defaults, and the bounds
 * that keep a task view inside one RPC frame.
 */
import { describe, expect, it } from "@effect/vitest"
import { loadBridgeSettings, MAX_INLINE_RESULT_BYTES } from "@serverfs/policy"
import { ConfigProvider, Effect, Either } from "effect"

const load = (env: Record<string, string>) =>
  Effect.either(loadBridgeSettings).pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

describe("SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES", () => {
  it.effect("defaults to 262144 and accepts values up to 524288", () =>
    Effect.gen(function* () {
      const defaults = yield* load({})
      expect(Either.map(defaults, (s) => s.resultSpoolThresholdBytes)).toEqual(Either.right(262144))
      for (const value of ["1", "1000", String(MAX_INLINE_RESULT_BYTES)]) {
        const loaded = yield* load({ SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES: value })
        expect(Either.map(loaded, (s) => s.resultSpoolThresholdBytes)).toEqual(Either.right(Number(value)))
      }
    })
  )

  it.effect("refuses larger values (an inline result must fit one 1 MiB frame), zero and words", () =>
    Effect.gen(function* () {
      for (const value of [String(MAX_INLINE_RESULT_BYTES + 1), "8388608", "0", "-1", "lots"]) {
        const loaded = yield* load({ SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES: value })
        expect(Either.isLeft(loaded), value).toBe(true)
        if (Either.isLeft(loaded)) {
          expect(loaded.left.variable).toBe("SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES")
        }
      }
      const tooLarge = yield* load({ SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES: "8388608" })
      expect(Either.isLeft(tooLarge) && tooLarge.left.problem).toBe(
        "must be at most 524288, so that a task view fits one RPC frame"
      )
    })
  )
})
