import * as path from "node:path"
import { Either } from "effect"
import {
  type AgentModeSetting,
  agentMode,
  agentRuntimes,
  NATIVE_RUNTIMES,
  type RuntimeName
} from "./AgentSettings.js"
import { ConfigurationError } from "./ConfigurationError.js"
import { DenyPolicy } from "./DenyPolicy.js"
import { type GlobalSettings, parseEntriesAll } from "./GlobalSettings.js"
import { globList, type Parse, strictBool, strictInt, text, unique } from "./Parsers.js"
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

export type Lookup = (variable: string) => string | undefined

export const SLOT_COUNT = 16
const ALIAS_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/

/** Every variable name the loader may read, so an Effect Config layer can fetch them up front. */
export const configurationVariableNames = (): ReadonlyArray<string> => {
  const names = new Set<string>(Object.values(GLOBAL_VARIABLES).map((e) => e.variable))
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

/** The problems of one pass, in the order found, and the variables that have one. */
class Collector {
  readonly problems: Array<ConfigurationError> = []
  readonly failed = new Set<string>()
  add(error: ConfigurationError): void {
    this.problems.push(error)
    this.failed.add(error.variable)
  }
}

/** Ends the current check (a global rule, a slot) with a problem. */
class Failure {
  constructor(readonly error: ConfigurationError) {}
}

/** Ends the current check silently: a variable it depends on already has its own problem. */
class Skip {}

const fail = (variable: string, problem: string): never => {
  throw new Failure(new ConfigurationError({ variable, problem }))
}

/** Runs one check; a problem it ends with is collected and the pass goes on. */
const attempt = <A>(c: Collector, check: () => A): A | undefined => {
  try {
    return check()
  } catch (e) {
    if (e instanceof Failure) c.add(e.error)
    else if (!(e instanceof Skip)) throw e
    return undefined
  }
}

/** A rule about variables that already failed would only repeat a consequence of that problem. */
const requireValid = (c: Collector, ...variables: ReadonlyArray<string>): void => {
  if (variables.some((v) => c.failed.has(v))) throw new Skip()
}

/** A value, or its default after collecting the problem (the checks that follow need a value). */
const read = <A>(c: Collector, lookup: Lookup, variable: string, parse: Parse<A>): A => {
  const parsed = parse(lookup(variable))
  if (Either.isRight(parsed)) return parsed.right
  c.add(new ConfigurationError({ variable, problem: parsed.left }))
  return Either.getOrThrow(parse(undefined))
}

const isSet = (lookup: Lookup, variable: string): boolean => (lookup(variable) ?? "").trim() !== ""

/**
 * Deny globs are bounded like caller patterns (SERVERFS_MAX_PATTERN_LENGTH): every path check
 * matches them, in time proportional to their length. The glob itself is never echoed.
 */
const boundedGlobs = (
  variable: string,
  globs: ReadonlyArray<string>,
  global: GlobalSettings
): ReadonlyArray<string> => {
  const max = global.maxPatternLength
  if (globs.some((g) => g.length > max)) {
    fail(variable, `a glob is longer than ${max} characters (SERVERFS_MAX_PATTERN_LENGTH)`)
  }
  return globs
}

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
  attempt(c, () => {
    if (global.agentBridgeEnabled && !global.agentLockDir.startsWith("/")) {
      fail(G.agentLockDir.variable, "must be an absolute path when the Agent Bridge is enabled")
    }
  })
  attempt(c, () => {
    if (global.agentBridgeEnabled && !global.agentBridgeSocket.startsWith("/")) {
      fail(G.agentBridgeSocket.variable, "must be an absolute path when the Agent Bridge is enabled")
    }
  })
  return global
}

interface SlotAgent {
  readonly mode: AgentModeSetting
  readonly runtimes: ReadonlyArray<RuntimeName>
}

/** Agent inheritance and consistency rules of §4.2. */
const parseSlotAgent = (
  c: Collector,
  lookup: Lookup,
  id: string,
  global: GlobalSettings,
  readOnly: boolean
): SlotAgent => {
  const modeVar = `WORKDIR_${id}_AGENT_MODE`
  const runtimesVar = `WORKDIR_${id}_AGENT_RUNTIMES`
  const explicitMode = read(c, lookup, modeVar, agentMode)
  const explicitRuntimes = read(c, lookup, runtimesVar, agentRuntimes)
  requireValid(
    c,
    modeVar,
    runtimesVar,
    `WORKDIR_${id}_READ_ONLY`,
    G.agentMode.variable,
    G.agentRuntimes.variable
  )
  const mode = explicitMode ?? global.agentMode
  const runtimes =
    explicitRuntimes.length > 0 ? explicitRuntimes : explicitMode === "disabled" ? [] : global.agentRuntimes
  if (mode === "disabled" && runtimes.length > 0)
    fail(runtimesVar, "runtimes are set but the Agent mode is disabled")
  if (mode !== "disabled" && runtimes.length === 0)
    fail(runtimesVar, `Agent mode ${mode} needs at least one runtime`)
  if (mode === "workspace-write" && readOnly)
    fail(modeVar, "workspace-write needs WORKDIR_" + id + "_READ_ONLY=false")
  for (const runtime of runtimes) {
    if (NATIVE_RUNTIMES.has(runtime) && mode !== "workspace-write") {
      fail(modeVar, `runtime ${runtime} runs only in workspace-write mode`)
    }
  }
  return { mode, runtimes }
}

/** A disabled slot must not carry settings that would silently do nothing (§4.2, case A). */
const checkDisabledSlot = (c: Collector, lookup: Lookup, id: string): void => {
  attempt(c, () => {
    // READ_ONLY itself was read (and any problem collected) by parseSlot.
    requireValid(c, `WORKDIR_${id}_READ_ONLY`)
    if (!read(c, lookup, `WORKDIR_${id}_READ_ONLY`, strictBool(true))) {
      fail(`WORKDIR_${id}_READ_ONLY`, "a disabled slot cannot be read-write; set WORKDIR_" + id + "_ALIAS")
    }
  })
  for (const suffix of ["AGENT_MODE", "AGENT_RUNTIMES"]) {
    attempt(c, () => {
      if (isSet(lookup, `WORKDIR_${id}_${suffix}`)) {
        fail(`WORKDIR_${id}_${suffix}`, "set on a disabled slot; set WORKDIR_" + id + "_ALIAS")
      }
    })
  }
  attempt(c, () => {
    if (read(c, lookup, `WORKDIR_${id}_BINARY_TRANSFER_ENABLED`, strictBool(false))) {
      fail(`WORKDIR_${id}_BINARY_TRANSFER_ENABLED`, "set on a disabled slot")
    }
  })
  // The other strict overrides do nothing here, but a malformed value is still refused: a typo
  // must not wait to surface until the day the slot is enabled.
  for (const suffix of ["ALLOW_HIDDEN", "DISABLE_DEFAULT_DENY"])
    read(c, lookup, `WORKDIR_${id}_${suffix}`, strictBool(false))
  for (const suffix of ["MAX_READ_BYTES", "MAX_READ_LINES", "MAX_WRITE_BYTES", "MAX_BINARY_TRANSFER_BYTES"]) {
    read(c, lookup, `WORKDIR_${id}_${suffix}`, strictInt(1))
  }
}

const parseSlot = (
  c: Collector,
  lookup: Lookup,
  slot: number,
  global: GlobalSettings,
  inspect: InspectSlotDirectory
): Workdir | undefined => {
  const id = slotId(slot)
  const v = (suffix: string) => `WORKDIR_${id}_${suffix}`
  // READ_ONLY is strict even for a disabled slot: a typo in a security switch must never pass.
  const readOnly = read(c, lookup, v("READ_ONLY"), strictBool(true))
  const alias = read(c, lookup, v("ALIAS"), text(""))
  const hostPath = (lookup(v("PATH")) ?? "").trim()

  if (alias === "") {
    if (hostPath !== "") {
      const found = inspect(hostPath)
      if (found._tag !== "placeholder")
        fail(v("ALIAS"), `is empty but ${v("PATH")} is set; set ${v("ALIAS")}`)
    }
    checkDisabledSlot(c, lookup, id)
    return undefined
  }
  if (!ALIAS_PATTERN.test(alias)) fail(v("ALIAS"), "must match ^[A-Za-z][A-Za-z0-9_-]{0,31}$")
  if (hostPath === "") fail(v("PATH"), `is required when ${v("ALIAS")} is set`)
  const found = inspect(hostPath)
  switch (found._tag) {
    case "relative":
      return fail(v("PATH"), "must be an absolute path")
    case "not-normalized":
      return fail(v("PATH"), 'must not contain "." or ".." segments')
    case "missing":
      return fail(v("PATH"), "does not exist")
    case "symlink":
      return fail(v("PATH"), "must not be a symbolic link")
    case "not-directory":
      return fail(v("PATH"), "is not a directory")
    case "unreadable":
      return fail(v("PATH"), "cannot be inspected")
    case "placeholder":
      return fail(v("PATH"), "points at a disabled-slot placeholder; set it to the real directory")
    case "sentinel-conflict":
      return fail(v("PATH"), "contains the reserved .serverfs-disabled entry")
    case "directory":
      break
  }

  const override = <A>(suffix: string, parse: Parse<A>) => read(c, lookup, v(suffix), parse)
  const description = read(c, lookup, v("DESCRIPTION"), text(""))
  const agent = parseSlotAgent(c, lookup, id, global, readOnly)
  return {
    slot,
    alias,
    description: description === "" ? null : description,
    readOnly,
    hostPath,
    policy: DenyPolicy.make({
      allowHidden: override("ALLOW_HIDDEN", strictBool(global.allowHidden)),
      disableDefaultDeny: override("DISABLE_DEFAULT_DENY", strictBool(global.disableDefaultDeny)),
      // Union, global first: a workdir can add rules but never loosen the global floor.
      extraDenyGlobs: unique([
        ...global.extraDenyGlobs,
        ...boundedGlobs(v("EXTRA_DENY_GLOBS"), read(c, lookup, v("EXTRA_DENY_GLOBS"), globList), global)
      ])
    }),
    maxReadBytes: override("MAX_READ_BYTES", strictInt(global.maxReadBytes)),
    maxReadLines: override("MAX_READ_LINES", strictInt(global.maxReadLines)),
    maxWriteBytes: override("MAX_WRITE_BYTES", strictInt(global.maxWriteBytes)),
    binaryTransferEnabled: override("BINARY_TRANSFER_ENABLED", strictBool(global.binaryTransferEnabled)),
    maxBinaryTransferBytes: override("MAX_BINARY_TRANSFER_BYTES", strictInt(global.maxBinaryTransferBytes)),
    agentMode: agent.mode,
    agentRuntimes: agent.runtimes
  }
}

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
