import { describe, expect, it } from "@effect/vitest"
import { ServerInfoOutput } from "@serverfs/domain"
import { Effect, FastCheck, Schema } from "effect"
import { canonicalJson, catalogMarker, type ListedTool, MARKER_PLACEHOLDER } from "../src/CatalogMarker.js"
import { objectJsonSchema } from "../src/JsonSchema.js"
import { serverCatalog, type ToolGroupEntry } from "../src/ServerCatalog.js"
import { type AnyTool, defineTool, READ_ANNOTATIONS } from "../src/ToolDefinition.js"

/**
 * The catalog marker as a pure function: canonical JSON cannot depend on the order keys were
 * built in, every change to an advertised field changes the marker, and server_info's own
 * description carries the marker its answer returns.
 */

/** The same JSON value with every object's keys inserted in reverse order. */
const reversed = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reversed)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((key) => [key, reversed((value as Record<string, unknown>)[key])])
  )
}

const SAMPLE: ReadonlyArray<ListedTool> = [
  {
    name: "alpha",
    title: "Alpha",
    description: "first tool",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", default: "" }, limit: { type: "integer", minimum: 1 } },
      required: ["path"],
      additionalProperties: false
    },
    outputSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    annotations: { readOnlyHint: true, openWorldHint: false },
    _meta: { "openai/fileParams": ["file"] }
  },
  {
    name: "beta",
    title: "Beta",
    description: "second tool",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }
  }
]

/** Every leaf of a JSON value, as a path of keys and indexes. */
const leaves = (value: unknown, path: ReadonlyArray<string | number> = []): Array<Array<string | number>> => {
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, [...path, i]))
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, inner]) => leaves(inner, [...path, key]))
  }
  return [[...path]]
}

/** A deep copy with the leaf at `path` changed (a different value of the same JSON kind). */
const changedAt = (value: unknown, path: ReadonlyArray<string | number>): unknown => {
  const copy = structuredClone(value) as Record<string | number, unknown>
  let at = copy
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>
  const last = path[path.length - 1] as string | number
  const old = at[last]
  at[last] =
    typeof old === "string"
      ? `${old}.`
      : typeof old === "number"
        ? old + 1
        : typeof old === "boolean"
          ? !old
          : 0
  return copy
}

describe("canonicalJson", () => {
  it("sorts keys at every depth, keeps array order, drops undefined members, adds no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: "x y" }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"e":"x y","f":1}]},"b":1}'
    )
  })

  it("property: the text does not depend on key insertion order, and parses back to the value", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.jsonValue(), (value) => {
        expect(canonicalJson(reversed(value))).toBe(canonicalJson(value))
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)))
      }),
      { numRuns: 300 }
    )
  })
})

describe("catalogMarker", () => {
  it("is 16 lowercase hex digits, and the same for the same catalog", () => {
    expect(catalogMarker(SAMPLE)).toMatch(/^[0-9a-f]{16}$/)
    expect(catalogMarker(structuredClone(SAMPLE) as ReadonlyArray<ListedTool>)).toBe(catalogMarker(SAMPLE))
  })

  it("does not depend on key order inside a tool nor on the order tools are listed in", () => {
    const marker = catalogMarker(SAMPLE)
    expect(catalogMarker(reversed(SAMPLE) as ReadonlyArray<ListedTool>)).toBe(marker)
    expect(catalogMarker([...SAMPLE].reverse())).toBe(marker)
  })

  it("changes when any advertised field changes: every leaf of names, descriptions, schemas, annotations and _meta", () => {
    const marker = catalogMarker(SAMPLE)
    const paths = leaves(SAMPLE)
    expect(paths.length).toBeGreaterThan(20)
    const unchanged = paths.filter(
      (path) => catalogMarker(changedAt(SAMPLE, path) as ReadonlyArray<ListedTool>) === marker
    )
    expect(unchanged).toEqual([])
  })

  it("changes when a field or a tool is added or removed", () => {
    const marker = catalogMarker(SAMPLE)
    const [alpha, beta] = SAMPLE as [ListedTool, ListedTool]
    expect(catalogMarker([alpha])).not.toBe(marker)
    expect(catalogMarker([...SAMPLE, { ...beta, name: "gamma" }])).not.toBe(marker)
    expect(catalogMarker([alpha, { ...beta, _meta: {} }])).not.toBe(marker)
    const { _meta: _, ...withoutMeta } = alpha
    expect(catalogMarker([withoutMeta as ListedTool, beta])).not.toBe(marker)
  })
})

const fakeTool = (name: string, description: string): AnyTool =>
  defineTool({
    name,
    title: name,
    description,
    annotations: READ_ANNOTATIONS,
    input: Schema.Struct({ path: Schema.String }),
    output: Schema.Struct({ ok: Schema.Boolean }),
    run: () => Effect.succeed({ ok: true }),
    audit: () => ({}),
    unexpected: "READ_FAILED"
  })

const list = (tool: AnyTool): ListedTool => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: objectJsonSchema(tool.input),
  outputSchema: objectJsonSchema(tool.output),
  annotations: tool.annotations
})

const GROUPS: ReadonlyArray<ToolGroupEntry> = [
  { group: "read", tools: [fakeTool("read_one", "reads"), fakeTool("read_two", "reads more")] },
  { group: "mutation", tools: [fakeTool("write_one", "writes")] }
]

const build = (groups = GROUPS, listing = list) =>
  serverCatalog({ name: "ServerFS", version: "9.9.9", groups, list: listing })

const answerOf = (catalog: ReturnType<typeof build>) => {
  const tool = catalog.tools.find((t) => t.name === "server_info")
  if (tool === undefined) throw new Error("server_info is not served")
  return Schema.decodeUnknownSync(ServerInfoOutput)(Effect.runSync(tool.run({})))
}

describe("serverCatalog", () => {
  it("appends server_info and answers name, version, names and counts by group", () => {
    const catalog = build()
    expect(catalog.listing.map((t) => t.name)).toEqual(["read_one", "read_two", "write_one", "server_info"])
    expect(answerOf(catalog)).toEqual({
      name: "ServerFS",
      version: "9.9.9",
      catalog: {
        marker: catalog.marker,
        tool_count: 4,
        tool_names: ["read_one", "read_two", "write_one", "server_info"],
        counts: { read: 2, mutation: 1, binary: 0, agent: 0, server: 1 }
      }
    })
  })

  it("server_info's advertised description carries the marker its answer returns", () => {
    const catalog = build()
    const self = catalog.listing.find((t) => t.name === "server_info")
    expect(self?.description).toContain(catalog.marker)
    expect(self?.description).not.toContain(MARKER_PLACEHOLDER)
    expect(answerOf(catalog).catalog.marker).toBe(catalog.marker)
    // The served tool record says the same as the listing.
    expect(catalog.tools.find((t) => t.name === "server_info")?.description).toBe(self?.description)
  })

  it("the rule is recomputable from the listing alone: marker → placeholder, then hash", () => {
    const catalog = build()
    const restored = catalog.listing.map((t) =>
      t.name === "server_info"
        ? { ...t, description: (t.description ?? "").replaceAll(catalog.marker, MARKER_PLACEHOLDER) }
        : t
    )
    expect(catalogMarker(restored)).toBe(catalog.marker)
  })

  it("is the same on every build of the same catalog", () => {
    expect(build().marker).toBe(build().marker)
    expect(build().listing).toEqual(build().listing)
  })

  it("changes with a group of more tools (e.g. the binary or agent tools), generically", () => {
    const withBinary = build([...GROUPS, { group: "binary", tools: [fakeTool("upload_one", "uploads")] }])
    expect(withBinary.marker).not.toBe(build().marker)
    expect(answerOf(withBinary).catalog.counts).toMatchObject({ binary: 1, server: 1 })
    const withAgent = build([...GROUPS, { group: "agent", tools: [fakeTool("agent_one", "delegates")] }])
    expect(withAgent.marker).not.toBe(build().marker)
    expect(withAgent.marker).not.toBe(withBinary.marker)
  })

  it("changes with a tool's description, and with anything the listing function adds (_meta)", () => {
    const [read, mutation] = GROUPS as [ToolGroupEntry, ToolGroupEntry]
    const reworded = build([
      { group: "read", tools: [fakeTool("read_one", "reads!"), ...read.tools.slice(1)] },
      mutation
    ])
    expect(reworded.marker).not.toBe(build().marker)
    const withMeta = build(GROUPS, (tool) => ({ ...list(tool), _meta: { "openai/fileParams": ["file"] } }))
    expect(withMeta.marker).not.toBe(build().marker)
  })

  it("does not depend on the version (an upgrade that keeps the catalog keeps the marker)", () => {
    const other = serverCatalog({ name: "ServerFS", version: "10.0.0", groups: GROUPS, list })
    expect(other.marker).toBe(build().marker)
  })
})
