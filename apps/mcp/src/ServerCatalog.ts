import type { ServerInfoOutput, ToolGroup, ToolGroupCounts } from "@serverfs/domain"
import { type ListedTool, stampCatalog } from "./CatalogMarker.js"
import type { AnyTool } from "./ToolDefinition.js"
import { SERVER_INFO, serverInfoDescription, serverInfoTool } from "./tools/serverInfoTool.js"

/** The tools of one group, in the order they are listed. */
export interface ToolGroupEntry {
  readonly group: Exclude<ToolGroup, "server">
  readonly tools: ReadonlyArray<AnyTool>
}

export interface ServerCatalog {
  readonly tools: ReadonlyArray<AnyTool>
  /** What tools/list returns, server_info's description stamped with the marker. */
  readonly listing: ReadonlyArray<ListedTool>
  readonly marker: string
}

/**
 * The served catalog: the configured groups plus server_info, listed by `list` (the one function
 * that turns a tool into its tools/list entry, so the marker covers exactly what is advertised,
 * whatever that function includes), and the marker over that listing (CatalogMarker.ts).
 * Generic over the groups: a configuration that registers more tools changes the marker with
 * no change here.
 */
export const serverCatalog = (options: {
  readonly name: string
  readonly version: string
  readonly groups: ReadonlyArray<ToolGroupEntry>
  readonly list: (tool: AnyTool) => ListedTool
}): ServerCatalog => {
  const served = options.groups.flatMap((entry) => entry.tools)
  const draft = serverInfoTool(() => answer)
  const { marker, listing } = stampCatalog([...served, draft].map(options.list), SERVER_INFO)
  const counts: Record<ToolGroup, number> = { read: 0, mutation: 0, binary: 0, agent: 0, server: 1 }
  for (const entry of options.groups) counts[entry.group] += entry.tools.length
  const answer: ServerInfoOutput = {
    name: options.name,
    version: options.version,
    catalog: {
      marker,
      tool_count: listing.length,
      tool_names: listing.map((tool) => tool.name),
      counts: counts satisfies ToolGroupCounts
    }
  }
  return { tools: [...served, { ...draft, description: serverInfoDescription(marker) }], listing, marker }
}
