import { Either } from "effect"
import type { AgentModeSetting, RuntimeName } from "./AgentSettings.js"
import type { LogLevel, Parse, ParserKind } from "./Parsers.js"

/**
 * Server-wide settings (tool-contracts §4.1, §4.3). List and search limits, the walk cap, the
 * search deadline and size cap and the edit count are global only; the others are defaults that
 * a workdir may override.
 */
export interface GlobalSettings {
  readonly logLevel: LogLevel
  readonly maxReadBytes: number
  readonly maxReadLines: number
  readonly defaultListLimit: number
  readonly maxListEntries: number
  readonly defaultSearchResults: number
  readonly maxSearchResults: number
  readonly maxWalkEntries: number
  readonly searchTimeoutSeconds: number
  readonly searchMaxFileBytes: number
  readonly maxPatternLength: number
  readonly searchMaxLineBytes: number
  readonly maxReadScanBytes: number
  readonly readTimeoutSeconds: number
  readonly maxResponseBytes: number
  readonly allowHidden: boolean
  readonly extraDenyGlobs: ReadonlyArray<string>
  readonly disableDefaultDeny: boolean
  readonly maxWriteBytes: number
  readonly binaryTransferEnabled: boolean
  readonly maxBinaryTransferBytes: number
  readonly maxEditsPerCall: number
  readonly agentMode: AgentModeSetting
  readonly agentRuntimes: ReadonlyArray<RuntimeName>
  readonly agentBridgeEnabled: boolean
  readonly agentBridgeSocket: string
  readonly agentBridgeTimeoutSeconds: number
  readonly agentLockDir: string
  readonly fileIngressEnabled: boolean
  readonly fileIngressTimeoutSeconds: number
  readonly fileIngressAllowedHosts: ReadonlyArray<string>
  readonly fileIngressAllowOpenaiBlobHosts: boolean
  readonly fileIngressFetchTimeoutSeconds: number
  readonly fileIngressMaxRedirects: number
}

/** One documented variable: its name, parser, default and meaning (docs/configuration.md). */
export interface VariableDoc {
  readonly variable: string
  readonly kind: ParserKind | "agent mode" | "runtime list" | "absolute path"
  readonly default: string
  readonly scope: "global" | "global, per-workdir override" | "per-workdir" | "bridge" | "serverfs-mcp"
  readonly description: string
}

/**
 * One row of a configuration table (GLOBAL_VARIABLES, BRIDGE_VARIABLES): a variable with its
 * parser, default and meaning, from which both the loader and the documentation are derived.
 */
export interface Entry<A> {
  readonly variable: string
  readonly kind: VariableDoc["kind"]
  readonly default: string
  readonly parse: Parse<A>
  readonly description: string
  /** Suffix of the per-workdir override (`WORKDIR_XX_<suffix>`), if the workdir may override it. */
  readonly override?: string
}

/**
 * A whole table parsed into the settings record it describes, key by key and typed by the
 * table's own mapped type (no cast of a loose record): the first variable that does not parse
 * stops it, named with its problem.
 */
export const parseEntries = <T>(
  entries: { readonly [K in keyof T]: Entry<T[K]> },
  raw: (variable: string) => string | undefined
): Either.Either<T, { readonly variable: string; readonly problem: string }> => {
  const out: Partial<T> = {}
  for (const key of Object.keys(entries) as Array<keyof T>) {
    const entry = entries[key]
    const parsed = entry.parse(raw(entry.variable))
    if (Either.isLeft(parsed)) return Either.left({ variable: entry.variable, problem: parsed.left })
    out[key] = parsed.right
  }
  // Every key of the table was assigned above.
  return Either.right(out as T)
}

/**
 * The whole table with every problem, not only the first (`serverfs config check`): a variable
 * that does not parse takes its default, so the checks that follow still have a value to work
 * with, and is listed among the problems in table order. `parseEntries` is its first problem.
 */
export const parseEntriesAll = <T>(
  entries: { readonly [K in keyof T]: Entry<T[K]> },
  raw: (variable: string) => string | undefined
): {
  readonly value: T
  readonly problems: ReadonlyArray<{ readonly variable: string; readonly problem: string }>
} => {
  const out: Partial<T> = {}
  const problems: Array<{ readonly variable: string; readonly problem: string }> = []
  for (const key of Object.keys(entries) as Array<keyof T>) {
    const entry = entries[key]
    const parsed = entry.parse(raw(entry.variable))
    if (Either.isRight(parsed)) out[key] = parsed.right
    else {
      problems.push({ variable: entry.variable, problem: parsed.left })
      // Unset is always accepted (the default), so this cannot fail.
      out[key] = Either.getOrThrow(entry.parse(undefined))
    }
  }
  // Every key of the table was assigned above.
  return { value: out as T, problems }
}
