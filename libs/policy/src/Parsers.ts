import { Either } from "effect"

/**
 * The value parsers of the configuration surface (tool-contracts §4.1). A strict parser turns
 * a bad value into a startup error; a lenient one falls back to the default, as the reference
 * does for the settings it marks lenient. `undefined` means "not set"; an empty string counts
 * as not set everywhere.
 */
export type Parse<A> = (raw: string | undefined) => Either.Either<A, string>

export type ParserKind =
  | "strict int"
  | "lenient int"
  | "lenient float"
  | "strict float"
  | "strict bool"
  | "lenient bool"
  | "string"
  | "glob list"
  | "log level"
  | "host list"

/** Not set: absent, empty or only whitespace. */
export const isUnset = (raw: string | undefined): raw is undefined | "" =>
  raw === undefined || raw.trim() === ""

const TRUE_WORDS = new Set(["true", "1", "yes", "on"])
const FALSE_WORDS = new Set(["false", "0", "no", "off"])

export const strictInt =
  (fallback: number): Parse<number> =>
  (raw) => {
    if (isUnset(raw)) return Either.right(fallback)
    const text = raw.trim()
    if (!/^\+?\d+$/.test(text)) return Either.left("expected a positive integer")
    const value = Number(text)
    if (!Number.isSafeInteger(value) || value <= 0) return Either.left("expected a positive integer")
    return Either.right(value)
  }

/** A strict int that must also lie in [min, max]: a limit outside its sane range stops startup. */
export const strictIntIn =
  (fallback: number, min: number, max: number): Parse<number> =>
  (raw) =>
    Either.flatMap(strictInt(fallback)(raw), (value) =>
      value < min || value > max
        ? Either.left(`expected an integer from ${min} to ${max}`)
        : Either.right(value)
    )

/** A number in [min, max] (decimal or exponent form); anything else stops startup. */
export const strictFloatIn =
  (fallback: number, min: number, max: number): Parse<number> =>
  (raw) => {
    if (isUnset(raw)) return Either.right(fallback)
    const text = raw.trim()
    const value = /^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN
    return Number.isFinite(value) && value >= min && value <= max
      ? Either.right(value)
      : Either.left(`expected a number from ${min} to ${max}`)
  }

/** A lenient int's own value, or undefined when it falls back (shared with fellBack). */
const lenientIntValue = (text: string): number | undefined => {
  const value = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(value) && value > 0 ? value : undefined
}

const lenientFloatValue = (text: string): number | undefined => {
  const value = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN
  return Number.isFinite(value) && value > 0 ? value : undefined
}

export const lenientInt =
  (fallback: number): Parse<number> =>
  (raw) =>
    Either.right(isUnset(raw) ? fallback : (lenientIntValue(raw.trim()) ?? fallback))

export const lenientFloat =
  (fallback: number): Parse<number> =>
  (raw) =>
    Either.right(isUnset(raw) ? fallback : (lenientFloatValue(raw.trim()) ?? fallback))

export const strictBool =
  (fallback: boolean): Parse<boolean> =>
  (raw) => {
    if (isUnset(raw)) return Either.right(fallback)
    const word = raw.trim().toLowerCase()
    if (TRUE_WORDS.has(word)) return Either.right(true)
    if (FALSE_WORDS.has(word)) return Either.right(false)
    return Either.left("expected one of true/false/1/0/yes/no/on/off")
  }

/** Only 1/true/yes/on are true; anything else is false (a security switch that fails closed). */
export const lenientBool =
  (fallback: boolean): Parse<boolean> =>
  (raw) =>
    Either.right(isUnset(raw) ? fallback : TRUE_WORDS.has(raw.trim().toLowerCase()))

export const text =
  (fallback: string): Parse<string> =>
  (raw) =>
    Either.right(isUnset(raw) ? fallback : raw.trim())

/** Comma-separated globs: entries trimmed, empty entries dropped, duplicates removed, order kept. */
export const globList: Parse<ReadonlyArray<string>> = (raw) =>
  Either.right(isUnset(raw) ? [] : unique(raw.split(",").map((g) => g.trim())))

export const unique = (items: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...new Set(items.filter((i) => i !== ""))
]

export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/** Case-insensitive; an invalid level falls back to INFO (lenient, as the reference). */
export const logLevel: Parse<LogLevel> = (raw) => {
  const word = (raw ?? "").trim().toUpperCase()
  return Either.right((LOG_LEVELS as ReadonlyArray<string>).includes(word) ? (word as LogLevel) : "INFO")
}

/**
 * Whether a set value of a lenient kind was not understood, so the setting fell back (to its
 * default; a lenient bool to false): what `serverfs config check` reports as source "fallback"
 * instead of leaving the operator to guess why a value had no effect. Strict kinds never fall
 * back: a bad value is an error.
 */
export const fellBack = (kind: string, raw: string | undefined): boolean => {
  if (isUnset(raw)) return false
  const text = raw.trim()
  switch (kind) {
    case "lenient int":
      return lenientIntValue(text) === undefined
    case "lenient float":
      return lenientFloatValue(text) === undefined
    case "lenient bool":
      return !TRUE_WORDS.has(text.toLowerCase()) && !FALSE_WORDS.has(text.toLowerCase())
    case "log level":
      return !(LOG_LEVELS as ReadonlyArray<string>).includes(text.toUpperCase())
    default:
      return false
  }
}

/** An integer from min to max, 0 allowed (a count, not a size); anything else stops startup. */
export const strictCountIn =
  (fallback: number, min: number, max: number): Parse<number> =>
  (raw) => {
    if (isUnset(raw)) return Either.right(fallback)
    const text = raw.trim()
    const value = /^\+?\d{1,6}$/.test(text) ? Number(text) : Number.NaN
    return Number.isSafeInteger(value) && value >= min && value <= max
      ? Either.right(value)
      : Either.left(`expected an integer from ${min} to ${max}`)
  }

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * Comma-separated exact DNS host names (lowercased; no scheme, port, path, wildcard or IP
 * literal): the file-ingress allowlist. A malformed entry stops startup rather than being
 * dropped, so the list an operator reads is the list that is enforced. The entry is not echoed.
 */
export const hostList: Parse<ReadonlyArray<string>> = (raw) => {
  if (isUnset(raw)) return Either.right([])
  const hosts = unique(raw.split(",").map((h) => h.trim().toLowerCase()))
  if (hosts.length > 64) return Either.left("at most 64 hosts")
  for (const host of hosts) {
    const labels = host.split(".")
    if (
      host.length > 253 ||
      labels.length < 2 ||
      !labels.every((l) => HOST_LABEL.test(l)) ||
      /^\d+$/.test(labels[labels.length - 1] ?? "")
    ) {
      return Either.left(
        "every entry must be an exact DNS host name (no scheme, port, wildcard or IP address)"
      )
    }
  }
  return Either.right(hosts)
}
