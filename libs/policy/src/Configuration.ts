import * as fs from "node:fs"
import { Config, ConfigProvider, Effect, Either, Layer, Option } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import { ENV_FILE_MAX_BYTES, envFileProblemText, parseEnvFileAll } from "./EnvFile.js"
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

/** Why the named file could not be opened, by errno: the operator's next step differs for each. */
const openProblem = (code: string | undefined): string => {
  switch (code) {
    case "ENOENT":
      return "the named file does not exist"
    case "ENOTDIR":
      return "the named file does not exist (a parent on its path is not a directory)"
    case "EACCES":
    case "EPERM":
      return "the named file cannot be read: permission denied"
    case "ELOOP":
      return "the named file cannot be read: too many symbolic links"
    default:
      return code === undefined ? "the named file cannot be read" : `the named file cannot be read (${code})`
  }
}

/**
 * The whole env file, refused unless it is a regular file of at most ENV_FILE_MAX_BYTES. Opened
 * non-blocking so a FIFO cannot hang startup; read to one byte past the limit so a file that grows
 * (or lies about its size, like /proc files) is still bounded.
 */
const readEnvFile = (file: string): Either.Either<Buffer, string> => {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch (e) {
    return Either.left(openProblem((e as NodeJS.ErrnoException).code))
  }
  try {
    const stat = fs.fstatSync(fd)
    if (stat.isDirectory()) return Either.left("the named file is a directory")
    if (!stat.isFile()) return Either.left("the named file is not a regular file")
    const buffer = Buffer.alloc(ENV_FILE_MAX_BYTES + 1)
    let length = 0
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null)
      if (n === 0) break
      length += n
      if (length > ENV_FILE_MAX_BYTES) {
        return Either.left(`the named file is larger than ${ENV_FILE_MAX_BYTES} bytes`)
      }
    }
    return Either.right(buffer.subarray(0, length))
  } catch (e) {
    return Either.left(openProblem((e as NodeJS.ErrnoException).code))
  } finally {
    fs.closeSync(fd)
  }
}

/** Where the configuration's values come from, and every problem with the env file. */
export interface EnvironmentSources {
  /** The environment merged over the file's entries: what `Config` reads. */
  readonly merged: ReadonlyMap<string, string>
  /** The named file (trimmed), if SERVERFS_ENV_FILE is set. */
  readonly envFile: string | undefined
  /** The file's entries (the lines that parsed). */
  readonly fromFile: ReadonlyMap<string, string>
  readonly problems: ReadonlyArray<ConfigurationError>
}

/**
 * The process environment merged with the `.env` file named by SERVERFS_ENV_FILE (if any). A
 * variable set in the environment wins over the file, as with other .env tools. Every problem
 * with the file is listed (a file that cannot be read, each line the strict grammar of
 * EnvFile.ts does not accept, named by its line number); the lines that parse still count.
 */
export const environmentSources = (env: NodeJS.ProcessEnv): EnvironmentSources => {
  const merged = new Map<string, string>()
  const problems: Array<ConfigurationError> = []
  const raw = env[ENV_FILE_VARIABLE]
  const file = raw === undefined || raw.trim() === "" ? undefined : raw.trim()
  let fromFile: ReadonlyMap<string, string> = new Map()
  if (file !== undefined) {
    const problem = (text: string) => new ConfigurationError({ variable: ENV_FILE_VARIABLE, problem: text })
    const content = readEnvFile(file)
    if (Either.isLeft(content)) problems.push(problem(content.left))
    else {
      const parsed = parseEnvFileAll(content.right)
      for (const p of parsed.problems) problems.push(problem(envFileProblemText(p)))
      fromFile = parsed.entries
    }
  }
  for (const [k, v] of fromFile) merged.set(k, v)
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged.set(k, v)
  return { merged, envFile: file, fromFile, problems }
}

/**
 * The merged environment, or the env file's first problem: a named file that cannot be read
 * stops startup (silently running without it could drop a READ_ONLY line), and so does any line
 * of it the strict grammar refuses.
 */
export const environmentWithEnvFile = (
  env: NodeJS.ProcessEnv
): Effect.Effect<ReadonlyMap<string, string>, ConfigurationError> =>
  Effect.suspend(() => {
    const { merged, problems } = environmentSources(env)
    const first = problems[0]
    return first === undefined ? Effect.succeed(merged) : Effect.fail(first)
  })

/** A layer that makes `Config` read the environment plus the optional .env file. */
export const EnvironmentConfigProvider = (env: NodeJS.ProcessEnv): Layer.Layer<never, ConfigurationError> =>
  Layer.unwrapEffect(
    Effect.map(environmentWithEnvFile(env), (map) =>
      Layer.setConfigProvider(ConfigProvider.fromMap(new Map(map)))
    )
  )
