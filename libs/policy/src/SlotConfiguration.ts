import {
  type AgentModeSetting,
  agentMode,
  agentRuntimes,
  NATIVE_RUNTIMES,
  type RuntimeName
} from "./AgentSettings.js"
import { DenyPolicy } from "./DenyPolicy.js"
import type { GlobalSettings } from "./GlobalSettings.js"
import { globList, type Parse, strictBool, strictInt, text, unique } from "./Parsers.js"
import { attempt, type Collector, fail, isSet, type Lookup, read, requireValid } from "./ProblemCollector.js"
import type { InspectSlotDirectory } from "./SlotDirectory.js"
import { GLOBAL_VARIABLES as G } from "./Variables.js"
import { slotId, type Workdir } from "./Workdir.js"

/** One workdir slot (tool-contracts §4.2, §4.3), parsed within a collecting pass. */
const ALIAS_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/

/**
 * Deny globs are bounded like caller patterns (SERVERFS_MAX_PATTERN_LENGTH): every path check
 * matches them, in time proportional to their length. The glob itself is never echoed.
 */
export const boundedGlobs = (
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

export const parseSlot = (
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
