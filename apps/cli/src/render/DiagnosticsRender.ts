import type { DiagnosticsSnapshot } from "@serverfs/domain"
import { renderFields } from "../output/Table.js"

/**
 * Human renderings of `serverfs diagnostics`: the bridge's JSON flattened to aligned
 * `dotted.key: value` lines (arrays of objects as `key[i].field`), so the human view shows
 * exactly the JSON contract's facts and never more. The JSON itself is printed as is.
 */
const flatten = (prefix: string, value: unknown, out: Array<readonly [string, string]>): void => {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push([prefix, "(none)"])
    for (const [i, item] of value.entries()) flatten(`${prefix}[${i}]`, item, out)
  } else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value))
      flatten(prefix === "" ? key : `${prefix}.${key}`, inner, out)
  } else {
    out.push([prefix, value === null ? "-" : String(value)])
  }
}

export const renderFlat = (value: unknown): string => {
  const fields: Array<readonly [string, string]> = []
  flatten("", value, fields)
  return renderFields(fields)
}

export const renderSnapshot = (snapshot: DiagnosticsSnapshot): string => renderFlat(snapshot)
