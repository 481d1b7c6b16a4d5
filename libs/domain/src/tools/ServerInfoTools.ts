import { Schema } from "effect"

/**
 * Input and output of `server_info` (beyond the reference, after the peer agent-vm-mcp): the
 * identity of the running server and of the tool catalog it advertises. Everything in it is a
 * function of the build and the configuration: no time, no process id, no host path.
 */

export const ServerInfoInput = Schema.Struct({})

/** The groups a tool belongs to; every group is always reported, 0 when it is not registered. */
export const ToolGroup = Schema.Literal("read", "mutation", "binary", "agent", "server")
export type ToolGroup = typeof ToolGroup.Type

export const ToolGroupCounts = Schema.Struct({
  read: Schema.Number,
  mutation: Schema.Number,
  binary: Schema.Number,
  agent: Schema.Number,
  server: Schema.Number
})
export type ToolGroupCounts = typeof ToolGroupCounts.Type

export const CatalogMarker = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{16}$/)).annotations({
  description:
    "The first 16 hex digits of the SHA-256 of the advertised tool catalog (canonical JSON, this tool's own marker replaced by a placeholder)."
})

export const ServerInfoOutput = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  catalog: Schema.Struct({
    marker: CatalogMarker,
    tool_count: Schema.Number,
    tool_names: Schema.Array(Schema.String),
    counts: ToolGroupCounts
  })
})
export type ServerInfoOutput = typeof ServerInfoOutput.Type
