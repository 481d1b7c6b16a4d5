import { Effect, HashSet } from "effect"
import { BRIDGE_VARIABLES } from "./BridgeSettings.js"
import { HTTP_VARIABLES } from "./HttpSettings.js"
import { configurationVariableNames } from "./ServerConfiguration.js"
import { ENV_FILE_VARIABLE } from "./Variables.js"

/** The prefixes of ServerFS's own variables: a name with one of them is meant for ServerFS. */
const PREFIXES = ["SERVERFS_", "WORKDIR_"] as const

/**
 * Every name some ServerFS process reads. Built per call (once per startup or `config check`), not
 * cached in module state: a few hundred names, and a function of constant tables.
 */
const known = (): ReadonlySet<string> =>
  new Set([
    ...configurationVariableNames(),
    ...Object.values(BRIDGE_VARIABLES).map((entry) => entry.variable),
    ...Object.values(HTTP_VARIABLES).map((entry) => entry.variable),
    ENV_FILE_VARIABLE
  ])

/**
 * The `SERVERFS_*` and `WORKDIR_*` names in the ambient configuration (the environment plus the
 * .env file) that no ServerFS process reads, sorted: most often a misspelling
 * (`WORKDIR_1_PATH`, `SERVERFS_MAX_READ_BYTE`) or a setting of another version. Only names are
 * returned, never values. A provider that cannot list its names yields none.
 */
export const unknownVariables: Effect.Effect<ReadonlyArray<string>> = Effect.configProviderWith((provider) =>
  provider.flattened.enumerateChildren([]).pipe(
    Effect.map((names) => unknownVariableNames(HashSet.values(names))),
    Effect.orElseSucceed(() => [] as ReadonlyArray<string>)
  )
)

/** The same from a list of names (`serverfs config check` has the merged map itself). */
export const unknownVariableNames = (names: Iterable<string>): ReadonlyArray<string> => {
  const ours = known()
  return [...names]
    .filter((name) => PREFIXES.some((prefix) => name.startsWith(prefix)) && !ours.has(name))
    .sort()
}
