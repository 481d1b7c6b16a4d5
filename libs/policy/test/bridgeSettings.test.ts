/**
 * The bridge's own settings (tool-contracts §4, bridge-internals §3): defaults, and the bounds
 * that keep a task view inside one RPC frame.
 */
import { describe, expect, it } from "@effect/vitest"
import { loadBridgeSettings, MAX_INLINE_RESULT_BYTES } from "@serverfs/policy"
import { ConfigProvider, Effect, Either } from "effect"

const load = (env: Record<string, string>) =>
  Effect.either(loadBridgeSettings).pipe(
    // A login environment: the state directory defaults under HOME (runtimePaths.test.ts).
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ HOME: "/home/t", ...env }))))
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

describe("the spec v0.3 §23 limits", () => {
  const cases = [
    [
      "SERVERFS_AGENT_MAX_PROMPT_BYTES",
      "maxPromptBytes",
      65_536,
      ["1", "131072"],
      ["0", "131073", "-1", "64k"]
    ],
    [
      "SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES",
      "maxFinalResponseBytes",
      8_388_608,
      ["1", "262144"],
      ["0", "8388609", "lots"]
    ],
    ["SERVERFS_AGENT_MAX_EVENT_BYTES", "maxEventBytes", 65_536, ["4096", "65536"], ["4095", "65537", ""]],
    [
      "SERVERFS_AGENT_MAX_EVENTS_PER_TASK",
      "maxEventsPerTask",
      10_000,
      ["100", "1000000"],
      ["99", "1000001", "1e4"]
    ]
  ] as const

  for (const [variable, key, fallback, accepted, refused] of cases) {
    it.effect(`${variable}: defaults to ${fallback}, accepts ${accepted.join(" and ")}`, () =>
      Effect.gen(function* () {
        expect(Either.map(yield* load({}), (s) => s[key])).toEqual(Either.right(fallback))
        for (const value of accepted) {
          expect(Either.map(yield* load({ [variable]: value }), (s) => s[key])).toEqual(
            Either.right(Number(value))
          )
        }
      })
    )
    it.effect(`${variable}: ${refused.filter((v) => v !== "").join(", ")} stop startup naming it`, () =>
      Effect.gen(function* () {
        for (const value of refused.filter((v) => v !== "")) {
          const loaded = yield* load({ [variable]: value })
          expect(Either.isLeft(loaded) && loaded.left.variable, value).toBe(variable)
          expect(Either.isLeft(loaded) && loaded.left.problem, value).not.toContain(value)
        }
      })
    )
  }

  it.effect("the disk-budget minimum follows the largest final response", () =>
    Effect.gen(function* () {
      // Defaults: 2 × (8 MiB + 64 KiB + 1 MiB) per active task.
      const small = {
        SERVERFS_AGENT_MAX_ACTIVE_TASKS: "4",
        SERVERFS_AGENT_STATE_MAX_BYTES: String(16 * 1_048_576)
      }
      const refused = yield* load(small)
      expect(Either.isLeft(refused) && refused.left.variable).toBe("SERVERFS_AGENT_STATE_MAX_BYTES")
      expect(Either.isLeft(refused) && refused.left.problem).toMatch(
        /^must be at least 76021760 \(19005440 per/
      )
      // A 1 MiB cap on final responses needs 2 × (1 MiB + 64 KiB + 1 MiB) = 4325376 per task.
      const fits = yield* load({
        SERVERFS_AGENT_MAX_ACTIVE_TASKS: "4",
        SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES: "1048576",
        SERVERFS_AGENT_STATE_MAX_BYTES: String(4 * 4_325_376)
      })
      expect(Either.isRight(fits)).toBe(true)
      const tight = yield* load({
        SERVERFS_AGENT_MAX_ACTIVE_TASKS: "4",
        SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES: "1048576",
        SERVERFS_AGENT_STATE_MAX_BYTES: String(4 * 4_325_376 - 1)
      })
      expect(Either.isLeft(tight) && tight.left.problem).toMatch(/^must be at least 17301504 \(4325376 per/)
    })
  )
})
