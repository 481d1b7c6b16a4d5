import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  Configuration,
  ConfigurationError,
  ENV_FILE_VARIABLE,
  EnvironmentConfigProvider,
  environmentWithEnvFile,
  WorkdirRegistry
} from "@serverfs/policy"
import { Effect, Layer } from "effect"
import { makeTempDir, removeTempDir } from "./helpers.js"

let root = ""
let workdir = ""

beforeAll(() => {
  root = makeTempDir("serverfs-policy-envfile-")
  workdir = path.join(root, "project")
  fs.mkdirSync(workdir)
})

afterAll(() => removeTempDir(root))

let counter = 0
const envFile = (content: string): string => {
  const file = path.join(root, `serverfs-${++counter}.env`)
  fs.writeFileSync(file, content)
  return file
}

const asObject = (map: ReadonlyMap<string, string>) => Object.fromEntries(map)

describe("environmentWithEnvFile", () => {
  it.effect("without SERVERFS_ENV_FILE the result is the environment only", () =>
    Effect.gen(function* () {
      const merged = yield* environmentWithEnvFile({ A: "1", B: "two", UNSET: undefined })
      expect(asObject(merged)).toEqual({ A: "1", B: "two" })
    })
  )

  it.effect("an empty or blank SERVERFS_ENV_FILE means no file", () =>
    Effect.gen(function* () {
      expect(asObject(yield* environmentWithEnvFile({ [ENV_FILE_VARIABLE]: "", A: "1" }))).toEqual({
        [ENV_FILE_VARIABLE]: "",
        A: "1"
      })
      expect(asObject(yield* environmentWithEnvFile({ [ENV_FILE_VARIABLE]: "   ", A: "1" }))).toEqual({
        [ENV_FILE_VARIABLE]: "   ",
        A: "1"
      })
    })
  )

  it.effect("reads comments, quotes and `export X=1` lines", () =>
    Effect.gen(function* () {
      const file = envFile(
        [
          "# a comment line",
          "PLAIN=value",
          "export EXPORTED=1",
          'DOUBLE="two words"',
          "SINGLE='single quoted'",
          "TRAILING=kept # trailing comment",
          "  INDENTED=yes",
          "EMPTY=",
          'MULTI="line one\\nline two"',
          ""
        ].join("\n")
      )
      const merged = yield* environmentWithEnvFile({ [ENV_FILE_VARIABLE]: file })
      expect(asObject(merged)).toEqual({
        [ENV_FILE_VARIABLE]: file,
        PLAIN: "value",
        EXPORTED: "1",
        DOUBLE: "two words",
        SINGLE: "single quoted",
        TRAILING: "kept",
        INDENTED: "yes",
        EMPTY: "",
        MULTI: "line one\nline two"
      })
    })
  )

  it.effect("a variable set in the environment wins over the file", () =>
    Effect.gen(function* () {
      const file = envFile("A=from-file\nB=from-file\n")
      const merged = yield* environmentWithEnvFile({ [ENV_FILE_VARIABLE]: file, A: "from-env" })
      expect(merged.get("A")).toBe("from-env")
      expect(merged.get("B")).toBe("from-file")
    })
  )

  it.effect("the file name is trimmed", () =>
    Effect.gen(function* () {
      const file = envFile("T=1\n")
      const merged = yield* environmentWithEnvFile({ [ENV_FILE_VARIABLE]: `  ${file}  ` })
      expect(merged.get("T")).toBe("1")
    })
  )

  it.effect("a missing file → ConfigurationError naming SERVERFS_ENV_FILE, without the path", () =>
    Effect.gen(function* () {
      const file = path.join(root, "no-such-secret-dir", "x.env")
      const error = yield* Effect.flip(environmentWithEnvFile({ [ENV_FILE_VARIABLE]: file }))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.variable).toBe(ENV_FILE_VARIABLE)
      expect(error.message.startsWith(`${ENV_FILE_VARIABLE}: `)).toBe(true)
      expect(error.message).not.toContain(file)
      expect(error.message).not.toContain("no-such-secret-dir")
      expect(error.message).not.toContain(root)
    })
  )

  it.effect(
    "an unreadable file (a directory) → ConfigurationError naming SERVERFS_ENV_FILE, without the path",
    () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(environmentWithEnvFile({ [ENV_FILE_VARIABLE]: workdir }))
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.variable).toBe(ENV_FILE_VARIABLE)
        expect(error.message).not.toContain(workdir)
        expect(error.message).not.toContain(root)
      })
  )

  it.effect("a stray line → ConfigurationError naming SERVERFS_ENV_FILE and the line, never its text", () =>
    Effect.gen(function* () {
      const file = envFile("# deny\nleaked-secret-token\nSERVERFS_EXTRA_DENY_GLOBS=normal.txt\n")
      const error = yield* Effect.flip(environmentWithEnvFile({ [ENV_FILE_VARIABLE]: file }))
      expect(error.message).toBe(`${ENV_FILE_VARIABLE}: line 2: not a NAME=value line (no "=")`)
    })
  )

  it.effect("a file over 1 MiB → ConfigurationError before parsing", () =>
    Effect.gen(function* () {
      const file = envFile(`A=${"x".repeat(1024 * 1024)}\n`)
      const error = yield* Effect.flip(environmentWithEnvFile({ [ENV_FILE_VARIABLE]: file }))
      expect(error.message).toBe(`${ENV_FILE_VARIABLE}: the named file is larger than 1048576 bytes`)
    })
  )

  it.effect("a FIFO → ConfigurationError at once, startup does not hang on it", () =>
    Effect.gen(function* () {
      const fifo = path.join(root, "env.fifo")
      const made = spawnSync("mkfifo", [fifo])
      expect(made.status).toBe(0)
      const error = yield* Effect.flip(environmentWithEnvFile({ [ENV_FILE_VARIABLE]: fifo }))
      expect(error.message).toBe(`${ENV_FILE_VARIABLE}: the named file is not a regular file`)
    })
  )

  it.effect("EnvironmentConfigProvider fails with the same error when the file cannot be read", () =>
    Effect.gen(function* () {
      const env = { [ENV_FILE_VARIABLE]: path.join(root, "absent.env") }
      const error = yield* Effect.flip(
        Effect.provide(
          Configuration,
          Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider(env)))
        )
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.variable).toBe(ENV_FILE_VARIABLE)
    })
  )
})

describe("end to end: .env file → EnvironmentConfigProvider → Configuration", () => {
  it.effect("a .env file setting WORKDIR_01_ALIAS/PATH/READ_ONLY=false gives a read-write workdir", () => {
    const file = envFile(
      [
        "# ServerFS",
        "export WORKDIR_01_ALIAS=project",
        `WORKDIR_01_PATH="${workdir}"`,
        "WORKDIR_01_READ_ONLY=false",
        "WORKDIR_01_DESCRIPTION='The project'",
        "SERVERFS_EXTRA_DENY_GLOBS=internal/**,*.log"
      ].join("\n")
    )
    const env = { [ENV_FILE_VARIABLE]: file, SERVERFS_MAX_READ_LINES: "77" }
    const layer = WorkdirRegistry.Default.pipe(
      Layer.provideMerge(Configuration.Default),
      Layer.provide(EnvironmentConfigProvider(env))
    )
    return Effect.gen(function* () {
      const config = yield* Configuration
      expect(config.global.maxReadLines).toBe(77)
      expect(config.global.extraDenyGlobs).toEqual(["internal/**", "*.log"])
      expect(config.workdirs).toHaveLength(1)
      const registry = yield* WorkdirRegistry
      const w = yield* registry.get("project")
      expect(w).toMatchObject({
        slot: 1,
        alias: "project",
        hostPath: workdir,
        readOnly: false,
        description: "The project",
        maxReadLines: 77
      })
      expect(w.policy.check(["internal", "x"])).toBe("denied")
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "the environment overrides the file: READ_ONLY=true in the environment keeps the workdir read-only",
    () => {
      const file = envFile(
        `WORKDIR_01_ALIAS=project\nWORKDIR_01_PATH=${workdir}\nWORKDIR_01_READ_ONLY=false\n`
      )
      const env = { [ENV_FILE_VARIABLE]: file, WORKDIR_01_READ_ONLY: "true" }
      return Effect.gen(function* () {
        const config = yield* Configuration
        expect(config.workdirs.map((w) => [w.alias, w.readOnly])).toEqual([["project", true]])
      }).pipe(Effect.provide(Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider(env)))))
    }
  )

  it.effect("a bad value in the .env file is a ConfigurationError naming the variable", () => {
    const file = envFile(`WORKDIR_02_ALIAS=project\nWORKDIR_02_PATH=${workdir}\nWORKDIR_02_READ_ONLY=maybe\n`)
    return Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(
          Configuration,
          Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider({ [ENV_FILE_VARIABLE]: file })))
        )
      )
      expect(error.variable).toBe("WORKDIR_02_READ_ONLY")
    })
  })
})
