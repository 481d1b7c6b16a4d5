import * as fs from "node:fs"
import * as util from "node:util"
import { Config, ConfigProvider, Effect, Layer, Option } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import {
  configurationVariableNames,
  parseServerConfiguration,
  type ServerConfiguration
} from "./ServerConfiguration.js"
import { inspectSlotDirectory } from "./SlotDirectory.js"
import { unknownVariables } from "./UnknownVariables.js"
import { ENV_FILE_VARIABLE } from "./Variables.js"

/**
 * The parsed configuration as a service. Values come from the ambient ConfigProvider, so tests
 * provide a map and the apps provide the environment merged with the optional .env file. It also
 * lists the SERVERFS_/WORKDIR_ names there that nothing reads (see UnknownVariables).
 */
export class Configuration extends Effect.Service<Configuration>()("@serverfs/policy/Configuration", {
  effect: Effect.gen(function* () {
    const names = configurationVariableNames()
    const values = yield* Config.all(names.map((name) => Config.option(Config.string(name)))).pipe(
      // A provider can only fail here on malformed nested data, which flat variables cannot have.
      Effect.orDie
    )
    const table = new Map<string, string>()
    names.forEach((name, i) => {
      const value = values[i]
      if (value !== undefined && Option.isSome(value)) table.set(name, value.value)
    })
    const parsed: ServerConfiguration = yield* parseServerConfiguration(
      (name) => table.get(name),
      inspectSlotDirectory
    )
    // Names only: what the processes log and `serverfs config check` prints at startup.
    return { ...parsed, unknownVariables: yield* unknownVariables }
  })
}) {}

/**
 * The process environment merged with the `.env` file named by SERVERFS_ENV_FILE (if any). A
 * variable set in the environment wins over the file, as with other .env tools. A named file
 * that cannot be read stops startup: silently running without it could drop a READ_ONLY line.
 */
export const environmentWithEnvFile = (
  env: NodeJS.ProcessEnv
): Effect.Effect<ReadonlyMap<string, string>, ConfigurationError> =>
  Effect.gen(function* () {
    const merged = new Map<string, string>()
    const file = env[ENV_FILE_VARIABLE]
    if (file !== undefined && file.trim() !== "") {
      const content = yield* Effect.try({
        try: () => fs.readFileSync(file.trim(), "utf8"),
        catch: () =>
          new ConfigurationError({ variable: ENV_FILE_VARIABLE, problem: "the named file cannot be read" })
      })
      const parsed = yield* Effect.try({
        try: () => util.parseEnv(content),
        catch: () =>
          new ConfigurationError({ variable: ENV_FILE_VARIABLE, problem: "the named file cannot be parsed" })
      })
      for (const [k, v] of Object.entries(parsed)) if (typeof v === "string") merged.set(k, v)
    }
    for (const [k, v] of Object.entries(env)) if (v !== undefined) merged.set(k, v)
    return merged
  })

/** A layer that makes `Config` read the environment plus the optional .env file. */
export const EnvironmentConfigProvider = (env: NodeJS.ProcessEnv): Layer.Layer<never, ConfigurationError> =>
  Layer.unwrapEffect(
    Effect.map(environmentWithEnvFile(env), (map) =>
      Layer.setConfigProvider(ConfigProvider.fromMap(new Map(map)))
    )
  )
