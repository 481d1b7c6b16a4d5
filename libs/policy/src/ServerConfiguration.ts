import * as path from "node:path"
import { Either } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import { type GlobalSettings, parseEntriesAll } from "./GlobalSettings.js"
import { strictBool } from "./Parsers.js"
import { attempt, Collector, fail, type Lookup, read, requireValid } from "./ProblemCollector.js"
import {
  BASE_DIRECTORY_VARIABLES,
  type ResolvedRuntimePath,
  resolveBridgeSocket,
  resolveLockDir
} from "./RuntimePaths.js"
import { boundedGlobs, parseSlot } from "./SlotConfiguration.js"
import type { InspectSlotDirectory } from "./SlotDirectory.js"
import { GLOBAL_VARIABLES, UNSUPPORTED_SWITCHES } from "./Variables.js"
import { slotId, type Workdir } from "./Workdir.js"
import {
  type LocateDirectory,
  locateDirectory,
  runtimeDirectoryProblem,
  workdirOverlapProblem
} from "./WorkdirOverlap.js"

/**
 * Parsing the whole configuration surface (tool-contracts §4) from a variable lookup. The servers
 * stop at the first problem (they never start half-configured); `serverfs config check` wants
 * every problem at once. Both come from one pass that collects problems in the order the checks
 * run, so the first one collected is exactly the one a server reports.
 */
export interface ServerConfiguration {
  readonly global: GlobalSettings
  readonly workdirs: ReadonlyArray<Workdir>
}

export type { Lookup } from "./ProblemCollector.js"

export const SLOT_COUNT = 16

/** Every variable name the loader may read, so an Effect Config layer can fetch them up front. */
export const configurationVariableNames = (): ReadonlyArray<string> => {
  const names = new Set<string>(Object.values(GLOBAL_VARIABLES).map((e) => e.variable))
  for (const base of BASE_DIRECTORY_VARIABLES) names.add(base)
  for (const s of UNSUPPORTED_SWITCHES) if (!s.variable.startsWith("WORKDIR_")) names.add(s.variable)
  for (let slot = 1; slot <= SLOT_COUNT; slot++) {
    for (const suffix of WORKDIR_SUFFIXES) names.add(`WORKDIR_${slotId(slot)}_${suffix}`)
  }
  return [...names]
}

const WORKDIR_SUFFIXES = [
  "ALIAS",
  "PATH",
  "DESCRIPTION",
  "READ_ONLY",
  ...Object.values(GLOBAL_VARIABLES).flatMap((e) => (e.override === undefined ? [] : [e.override]))
] as const

const G = GLOBAL_VARIABLES

const parseGlobal = (c: Collector, lookup: Lookup): GlobalSettings => {
  const { value: global, problems } = parseEntriesAll(GLOBAL_VARIABLES, lookup)
  for (const problem of problems) c.add(new ConfigurationError(problem))
  for (const s of UNSUPPORTED_SWITCHES) {
    attempt(c, () => {
      if (!s.variable.startsWith("WORKDIR_") && read(c, lookup, s.variable, strictBool(false))) {
        fail(s.variable, `${s.feature} is not available in this version of ServerFS`)
      }
    })
  }
  attempt(c, () => {
    requireValid(c, G.maxPatternLength.variable)
    boundedGlobs(G.extraDenyGlobs.variable, global.extraDenyGlobs, global)
  })
  // Global pair rule (§4.1): a mode needs runtimes and runtimes need a mode.
  attempt(c, () => {
    requireValid(c, G.agentMode.variable, G.agentRuntimes.variable)
    if (global.agentMode === "disabled" && global.agentRuntimes.length > 0) {
      fail(G.agentRuntimes.variable, "runtimes are set but SERVERFS_AGENT_MODE is disabled")
    }
    if (global.agentMode !== "disabled" && global.agentRuntimes.length === 0) {
      fail(G.agentRuntimes.variable, `SERVERFS_AGENT_MODE is ${global.agentMode} but no runtime is set`)
    }
  })
  // Ingress that could never fetch anything is a mistake, not a harmless setting.
  attempt(c, () => {
    requireValid(
      c,
      G.fileIngressEnabled.variable,
      G.fileIngressAllowedHosts.variable,
      G.fileIngressAllowOpenaiBlobHosts.variable
    )
    if (
      global.fileIngressEnabled &&
      global.fileIngressAllowedHosts.length === 0 &&
      !global.fileIngressAllowOpenaiBlobHosts
    ) {
      fail(
        G.fileIngressAllowedHosts.variable,
        "file ingress is enabled but no host is allowed (set it or SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS=true)"
      )
    }
  })
  // The user-scoped defaults (spec v0.3 §6): needed, and so required, only with the bridge on.
  const agentLockDir = runtimePath(c, global.agentBridgeEnabled, resolveLockDir(lookup))
  const agentBridgeSocket = runtimePath(c, global.agentBridgeEnabled, resolveBridgeSocket(lookup))
  return { ...global, agentLockDir, agentBridgeSocket }
}

/**
 * A resolved runtime path; with the bridge enabled it must be absolute, and a missing default is
 * an error. With the bridge off nothing uses it: an unresolvable default is left empty.
 */
const runtimePath = (
  c: Collector,
  bridgeEnabled: boolean,
  resolved: Either.Either<ResolvedRuntimePath, ConfigurationError>
): string =>
  attempt(c, () => {
    if (Either.isLeft(resolved)) {
      if (bridgeEnabled) fail(resolved.left.variable, resolved.left.problem)
      return ""
    }
    const { variable, path: value } = resolved.right
    if (bridgeEnabled && !path.isAbsolute(value)) {
      fail(variable, "must be an absolute path when the Agent Bridge is enabled")
    }
    return value
  }) ?? ""

/** The configuration with every problem found (`serverfs config check`); see parseServerConfiguration. */
export interface ConfigurationCheck {
  /** Usable only when `problems` is empty: a bad value stands at its default, a bad slot is left out. */
  readonly configuration: ServerConfiguration
  readonly problems: ReadonlyArray<ConfigurationError>
}

export const checkServerConfiguration = (
  lookup: Lookup,
  inspect: InspectSlotDirectory,
  locate: LocateDirectory = locateDirectory
): ConfigurationCheck => {
  const c = new Collector()
  const global = parseGlobal(c, lookup)
  const workdirs: Workdir[] = []
  const slotOfAlias = new Map<string, number>()
  for (let slot = 1; slot <= SLOT_COUNT; slot++) {
    attempt(c, () => {
      const workdir = parseSlot(c, lookup, slot, global, inspect)
      if (workdir === undefined) return
      const first = slotOfAlias.get(workdir.alias)
      if (first !== undefined) {
        fail(`WORKDIR_${slotId(slot)}_ALIAS`, `duplicates WORKDIR_${slotId(first)}_ALIAS`)
      }
      slotOfAlias.set(workdir.alias, slot)
      workdirs.push(workdir)
    })
  }
  // Same directory, nested or `/`, compared by device and inode (WorkdirOverlap.ts).
  const located = workdirs.flatMap((w) => {
    const location = locate(w.hostPath)
    if (location === undefined) {
      c.add(
        new ConfigurationError({ variable: `WORKDIR_${slotId(w.slot)}_PATH`, problem: "cannot be inspected" })
      )
      return []
    }
    const directoryId = location.chain[0]
    return [{ workdir: directoryId === undefined ? w : { ...w, directoryId }, location }]
  })
  const placed = located.map((l) => l.workdir)
  const overlap = workdirOverlapProblem(located)
  if (overlap !== undefined) c.add(overlap)
  // The bridge's lock directory and socket directory (its state directory: BridgeSettings).
  if (global.agentBridgeEnabled) {
    const inside = runtimeDirectoryProblem(
      [
        { variable: G.agentLockDir.variable, hostPath: global.agentLockDir },
        { variable: G.agentBridgeSocket.variable, hostPath: path.dirname(global.agentBridgeSocket) }
      ],
      placed,
      locate
    )
    if (inside !== undefined) c.add(inside)
  }
  attempt(c, () => {
    const delegating = placed.find((w) => w.agentMode !== "disabled")
    if (delegating !== undefined && !global.agentBridgeEnabled) {
      fail(
        G.agentBridgeEnabled.variable,
        `must be true: WORKDIR_${slotId(delegating.slot)} allows Agent delegation`
      )
    }
  })
  return { configuration: { global, workdirs: placed }, problems: c.problems }
}

/** The configuration, or the first problem: what the servers start with or stop on. */
export const parseServerConfiguration = (
  lookup: Lookup,
  inspect: InspectSlotDirectory,
  locate: LocateDirectory = locateDirectory
): Either.Either<ServerConfiguration, ConfigurationError> => {
  const { configuration, problems } = checkServerConfiguration(lookup, inspect, locate)
  const first = problems[0]
  return first === undefined ? Either.right(configuration) : Either.left(first)
}
