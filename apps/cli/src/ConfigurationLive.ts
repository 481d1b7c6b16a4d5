import { Configuration, EnvironmentConfigProvider } from "@serverfs/policy"
import { Layer } from "effect"

/**
 * The parsed configuration (environment + SERVERFS_ENV_FILE), for the commands that need it:
 * each provides it itself (`Command.provide(ConfigurationLive)`) rather than main.ts for all. A
 * configuration error then stops only those commands — `serverfs --help`, `--version`,
 * `config check` and `doctor` must work precisely when the configuration is broken.
 */
export const ConfigurationLive = Configuration.Default.pipe(
  Layer.provide(EnvironmentConfigProvider(process.env))
)
