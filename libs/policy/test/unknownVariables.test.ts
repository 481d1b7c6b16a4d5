/**
 * Variables meant for ServerFS that nothing reads: reported by name (never by value) so a
 * misspelled setting does not silently fall back to its default.
 */
import { describe, expect, it } from "@effect/vitest"
import { unknownVariables } from "@serverfs/policy"
import { ConfigProvider, Effect } from "effect"

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("unknownVariables", () => {
  it.effect("names SERVERFS_ and WORKDIR_ variables that no process reads, sorted, without values", () =>
    Effect.gen(function* () {
      const names = yield* unknownVariables.pipe(
        withEnv({
          WORKDIR_01_PATH: "/srv/a",
          WORKDIR_01_ALIAS: "a",
          WORKDIR_1_PATH: "/srv/typo",
          WORKDIR_17_PATH: "/srv/seventeen",
          WORKDIR_01_READONLY: "true",
          SERVERFS_MAX_READ_BYTE: "10",
          SERVERFS_MAX_READ_BYTES: "10",
          SERVERFS_AGENT_BRIDGE_ENABLED: "true",
          SERVERFS_CODEX_BIN: "/usr/bin/codex",
          SERVERFS_ENV_FILE: "/etc/serverfs.env",
          SERVERFS_JEV_API_KEY: "secret-value",
          HOME: "/root",
          PATH: "/usr/bin"
        })
      )
      expect(names).toEqual([
        "SERVERFS_JEV_API_KEY",
        "SERVERFS_MAX_READ_BYTE",
        "WORKDIR_01_READONLY",
        "WORKDIR_17_PATH",
        "WORKDIR_1_PATH"
      ])
      expect(names.join(" ")).not.toContain("secret-value")
    })
  )

  it.effect("nothing to report for a clean configuration", () =>
    Effect.gen(function* () {
      expect(yield* unknownVariables.pipe(withEnv({ WORKDIR_16_PATH: "/srv", OTHER: "x" }))).toEqual([])
    })
  )
})
