import { Either } from "effect"
import { BRIDGE_VARIABLES, type BridgeSettings, checkBridgeSettings } from "./BridgeSettings.js"
import { environmentSources } from "./Configuration.js"
import type { ConfigurationError } from "./ConfigurationError.js"
import type { Entry } from "./GlobalSettings.js"
import {
  checkHttpSettings,
  HTTP_VARIABLES,
  type HttpSettings,
  maxBodyBytesFor,
  maxBodyMemoryBytesFor
} from "./HttpSettings.js"
import { fellBack, isUnset } from "./Parsers.js"
import {
  type ResolvedRuntimePath,
  resolveBridgeSocket,
  resolveLockDir,
  resolveStateDir
} from "./RuntimePaths.js"
import { checkServerConfiguration, type ServerConfiguration } from "./ServerConfiguration.js"
import { type InspectSlotDirectory, inspectSlotDirectory } from "./SlotDirectory.js"
import { unknownVariableNames } from "./UnknownVariables.js"
import { GLOBAL_VARIABLES } from "./Variables.js"
import { slotId } from "./Workdir.js"
import { type LocateDirectory, locateDirectory } from "./WorkdirOverlap.js"

/**
 * Everything `serverfs config check` (and the configuration check of `serverfs doctor`) reports:
 * every problem at once, each as the servers would word it; the effective value of every global
 * and bridge setting with where it came from; warnings that do not stop a server. Host paths of
 * workdirs stay out (aliases and slots only); the env file's path and the bridge's own paths
 * (directories, Codex home, runtime binaries) are the operator's settings and are shown. A value
 * in error or not understood is never echoed.
 */
export type SettingSource = "env" | "file" | "default" | "fallback"

export interface SettingReport {
  readonly variable: string
  /** The effective value as text; null when the value is in error (see `errors`). */
  readonly value: string | null
  readonly source: SettingSource
}

export interface ConfigurationWarning {
  /** The variable concerned, or null for the environment as a whole (zero workdirs, root). */
  readonly variable: string | null
  readonly message: string
}

export interface ConfigurationReport {
  readonly envFile: string | null
  readonly errors: ReadonlyArray<ConfigurationError>
  readonly warnings: ReadonlyArray<ConfigurationWarning>
  readonly settings: ReadonlyArray<SettingReport>
  /** Meaningful as a whole only without errors (a bad value stands at its default). */
  readonly configuration: ServerConfiguration
  /** The bridge's settings, when the Agent Bridge is enabled. */
  readonly bridge: BridgeSettings | undefined
  readonly unknownVariables: ReadonlyArray<string>
  /**
   * The bridge's socket, lock and state paths as both processes resolve them, each with where it
   * came from (its variable, the system layout, XDG_DATA_HOME/XDG_STATE_HOME or the HOME
   * fallback), when the Agent Bridge is enabled; a path whose variable is in error is left out.
   */
  readonly runtimePaths: ReadonlyArray<ResolvedRuntimePath>
}

const display = (entry: Entry<unknown>, value: unknown): string => {
  // The table stores the retention in seconds; the variable is in hours.
  if (entry.variable === BRIDGE_VARIABLES.retentionSeconds.variable && typeof value === "number")
    return String(value / 3600)
  if (Array.isArray(value)) return value.join(",")
  if (value === null || value === undefined) return ""
  return String(value)
}

const fallbackMessage = (entry: Entry<unknown>, value: string): string =>
  entry.kind === "lenient bool"
    ? `not one of 1/true/yes/on/0/false/no/off; taken as ${value}`
    : `not understood; the default ${value} is used instead`

export interface InspectOptions {
  /** The uid the check runs as (process.getuid()); 0 adds the "running as root" warning. */
  readonly uid: number | undefined
  readonly inspect?: InspectSlotDirectory
  readonly locate?: LocateDirectory
}

export const inspectConfiguration = (
  env: NodeJS.ProcessEnv,
  options: InspectOptions
): ConfigurationReport => {
  const locate = options.locate ?? locateDirectory
  const sources = environmentSources(env)
  const lookup = (variable: string) => sources.merged.get(variable)
  const checked = checkServerConfiguration(lookup, options.inspect ?? inspectSlotDirectory, locate)
  const { global, workdirs } = checked.configuration
  const bridgeChecked = global.agentBridgeEnabled ? checkBridgeSettings(lookup, workdirs) : undefined
  // serverfs-mcp's transport settings: the HTTP ones matter (and are listed) only for http.
  const httpChecked = checkHttpSettings(lookup, global)
  const errors = [
    ...sources.problems,
    ...checked.problems,
    ...(bridgeChecked?.problems ?? []),
    ...httpChecked.problems
  ]
  const failed = new Set(errors.map((e) => e.variable))
  const warnings: Array<ConfigurationWarning> = []

  const report = (entry: Entry<unknown>, value: unknown): SettingReport => {
    const raw = lookup(entry.variable)
    const shown = display(entry, value)
    if (isUnset(raw)) return { variable: entry.variable, value: shown, source: "default" }
    if (failed.has(entry.variable)) {
      return {
        variable: entry.variable,
        value: null,
        source: env[entry.variable] !== undefined ? "env" : "file"
      }
    }
    if (fellBack(entry.kind, raw)) {
      warnings.push({ variable: entry.variable, message: fallbackMessage(entry, shown) })
      return { variable: entry.variable, value: shown, source: "fallback" }
    }
    return {
      variable: entry.variable,
      value: shown,
      source: env[entry.variable] !== undefined ? "env" : "file"
    }
  }
  const settings: Array<SettingReport> = []
  for (const [key, entry] of Object.entries(GLOBAL_VARIABLES) as Array<[keyof typeof global, Entry<unknown>]>)
    settings.push(report(entry, global[key]))
  if (bridgeChecked !== undefined) {
    const bridge = bridgeChecked.settings
    for (const [key, entry] of Object.entries(BRIDGE_VARIABLES) as Array<
      [keyof BridgeSettings, Entry<unknown>]
    >)
      settings.push(report(entry, bridge[key]))
  }

  settings.push(report(HTTP_VARIABLES.transport, httpChecked.settings.transport))
  if (httpChecked.settings.transport === "http") {
    for (const [key, entry] of Object.entries(HTTP_VARIABLES) as Array<[keyof HttpSettings, Entry<unknown>]>)
      if (key === "maxBodyBytes") settings.push(report(entry, maxBodyBytesFor(httpChecked.settings, global)))
      else if (key === "maxBodyMemoryBytes")
        settings.push(report(entry, maxBodyMemoryBytesFor(httpChecked.settings, global)))
      else if (key !== "transport") settings.push(report(entry, httpChecked.settings[key]))
  }

  if (workdirs.length === 0 && ![...failed].some((v) => v.startsWith("WORKDIR_"))) {
    warnings.push({
      variable: null,
      message:
        "no workdir is configured (set WORKDIR_01_ALIAS and WORKDIR_01_PATH): the server would serve nothing"
    })
  }
  for (const w of workdirs) {
    if (locate(w.hostPath)?.isFilesystemRoot === true) {
      warnings.push({
        variable: `WORKDIR_${slotId(w.slot)}_PATH`,
        message: `workdir "${w.alias}" is the filesystem root: every file of the host not denied by a rule is readable through it`
      })
    }
  }
  if (options.uid === 0) {
    warnings.push({
      variable: null,
      message:
        "running as root (uid 0): ServerFS needs no privilege; run it as the unprivileged user that owns the workdirs"
    })
  }
  const unknownVariables = unknownVariableNames(sources.merged.keys())
  if (unknownVariables.length > 0) {
    warnings.push({
      variable: null,
      message: `${unknownVariables.length} variable(s) that ServerFS does not read (misspelled?): ${unknownVariables.join(", ")}`
    })
  }
  const runtimePaths = global.agentBridgeEnabled
    ? [resolveBridgeSocket(lookup), resolveLockDir(lookup), resolveStateDir(lookup)].flatMap((resolved) =>
        Either.isRight(resolved) && !failed.has(resolved.right.variable) ? [resolved.right] : []
      )
    : []
  return {
    envFile: sources.envFile ?? null,
    errors,
    warnings,
    settings,
    configuration: checked.configuration,
    bridge: bridgeChecked?.settings,
    unknownVariables,
    runtimePaths
  }
}
