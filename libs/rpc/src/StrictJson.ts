/**
 * JSON as the RPC frames carry it: UTF-8 that must decode strictly (no silent U+FFFD
 * replacement), and numbers that must be finite both ways. `JSON.parse` already refuses the
 * NaN/Infinity constants Python's json module accepts by default, but a literal such as `1e999`
 * still parses to Infinity, and `JSON.stringify` would quietly write NaN as `null`.
 */
export type ParsedJson =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: "not UTF-8" | "not JSON" | "non-finite number" }

// ignoreBOM keeps a leading BOM in the text, so JSON.parse rejects it like Python's json does.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

export const parseJsonLine = (bytes: Uint8Array): ParsedJson => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, problem: "not UTF-8" }
  }
  let nonFinite = false
  let value: unknown
  try {
    value = JSON.parse(text, (_key, v: unknown) => {
      if (typeof v === "number" && !Number.isFinite(v)) nonFinite = true
      return v
    })
  } catch {
    // Also a RangeError from nesting deep enough to exhaust the stack.
    return { ok: false, problem: "not JSON" }
  }
  return nonFinite ? { ok: false, problem: "non-finite number" } : { ok: true, value }
}

/**
 * JSON text of `value`, or undefined when it has no faithful JSON form: a non-finite number, a
 * bigint, a cycle, or a top-level value JSON.stringify would drop.
 */
export const stringifyJson = (value: unknown): string | undefined => {
  let nonFinite = false
  let text: string | undefined
  try {
    text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === "number" && !Number.isFinite(v)) nonFinite = true
      return v
    })
  } catch {
    return undefined
  }
  return nonFinite ? undefined : text
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
