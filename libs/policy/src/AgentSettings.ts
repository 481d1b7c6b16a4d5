import { Either } from "effect"
import type { Parse } from "./Parsers.js"

/**
 * Agent policy values (tool-contracts §4.1/§4.2). Parsed strictly: an agent switch that cannot
 * be understood must stop the server, never silently widen or narrow delegation.
 */
export const AGENT_MODES = ["disabled", "review", "workspace-write"] as const
export type AgentModeSetting = (typeof AGENT_MODES)[number]

/**
 * Runtimes an administrator may allowlist. `fake` is the scripted test runtime: accepted only
 * when named explicitly, never a default, never shown unless allowlisted.
 */
export const KNOWN_RUNTIMES = ["claude", "codex", "fake"] as const
export type RuntimeName = (typeof KNOWN_RUNTIMES)[number]

/** Native providers run only as workspace-write, where the bridge holds the writer lease. */
export const NATIVE_RUNTIMES: ReadonlySet<string> = new Set(["codex", "claude"])

export const agentMode: Parse<AgentModeSetting | undefined> = (raw) => {
  if (raw === undefined || raw.trim() === "") return Either.right(undefined)
  const word = raw.trim().toLowerCase()
  return (AGENT_MODES as ReadonlyArray<string>).includes(word)
    ? Either.right(word as AgentModeSetting)
    : Either.left(`expected one of ${AGENT_MODES.join(", ")}`)
}

export const agentRuntimes: Parse<ReadonlyArray<RuntimeName>> = (raw) => {
  if (raw === undefined || raw.trim() === "") return Either.right([])
  const names = raw
    .split(",")
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== "")
  const seen = new Set<string>()
  for (const name of names) {
    if (!(KNOWN_RUNTIMES as ReadonlyArray<string>).includes(name)) {
      return Either.left(`unknown runtime (expected a comma list of ${KNOWN_RUNTIMES.join(", ")})`)
    }
    if (seen.has(name)) return Either.left("runtime listed twice")
    seen.add(name)
  }
  return Either.right([...seen].sort() as ReadonlyArray<RuntimeName>)
}
