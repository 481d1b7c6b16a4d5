import { createHash } from "node:crypto"

/**
 * The catalog marker: a short, stable identity of the tool catalog a server advertises in
 * tools/list, so a chat host holding a stale snapshot of that list can notice it (server_info
 * embeds the marker in its own description and returns the live one).
 *
 * The rule, which a client can recompute from tools/list alone:
 *   1. take the advertised tool objects, each exactly as listed (name, title, description, input
 *      and output schemas, annotations, `_meta`, whatever else the listing carries);
 *   2. in server_info's description, put MARKER_PLACEHOLDER back where the marker stands (the
 *      marker cannot hash itself);
 *   3. order the tools by name and serialize them as canonical JSON: object keys sorted by UTF-16
 *      code units, no whitespace, members whose value is undefined left out (as JSON.stringify
 *      does), arrays in their order;
 *   4. the marker is the first 16 hex digits of the SHA-256 of that UTF-8 text.
 * Nothing else goes in: no version, no time, no host path, so the marker changes exactly when
 * the catalog does and is the same on every start of the same build and configuration.
 */

export const MARKER_PLACEHOLDER = "{catalog_marker}"

export const MARKER_LENGTH = 16

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** One tool as tools/list advertises it. */
export interface ListedTool {
  readonly name: string
  readonly description?: string
  readonly [key: string]: unknown
}

const canonical = (value: unknown): string | undefined => {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return undefined
  if (value === null || typeof value !== "object") return JSON.stringify(value as Json)
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item) ?? "null").join(",")}]`
  const members: Array<string> = []
  // Default sort: UTF-16 code units, independent of locale and of insertion order.
  for (const key of Object.keys(value).sort()) {
    const inner = canonical((value as Record<string, unknown>)[key])
    if (inner !== undefined) members.push(`${JSON.stringify(key)}:${inner}`)
  }
  return `{${members.join(",")}}`
}

/** Canonical JSON of a JSON value: the same text whatever order its object keys were built in. */
export const canonicalJson = (value: unknown): string => canonical(value) ?? "null"

/** The marker of a listing in which the marker's own occurrences are already placeholders. */
export const catalogMarker = (listing: ReadonlyArray<ListedTool>): string => {
  const ordered = [...listing].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return createHash("sha256").update(canonicalJson(ordered), "utf8").digest("hex").slice(0, MARKER_LENGTH)
}

/**
 * Stamp a listing: compute the marker over it (the tool named `self` carries MARKER_PLACEHOLDER
 * in its description) and write the marker into that description.
 */
export const stampCatalog = (
  listing: ReadonlyArray<ListedTool>,
  self: string
): { readonly marker: string; readonly listing: ReadonlyArray<ListedTool> } => {
  const marker = catalogMarker(listing)
  return {
    marker,
    listing: listing.map((tool) =>
      tool.name === self && tool.description !== undefined
        ? { ...tool, description: tool.description.replaceAll(MARKER_PLACEHOLDER, marker) }
        : tool
    )
  }
}
