import { ServerInfoInput, ServerInfoOutput } from "@serverfs/domain"
import { Effect } from "effect"
import { MARKER_PLACEHOLDER } from "../CatalogMarker.js"
import { type AnyTool, defineTool, READ_ANNOTATIONS } from "../ToolDefinition.js"

export const SERVER_INFO = "server_info"

/**
 * server_info's description, with the catalog marker in it: a host that froze tools/list keeps
 * this text, so comparing it with a live call's `catalog.marker` tells the model whether its
 * tool list is still the server's. Built with MARKER_PLACEHOLDER first (the marker is computed
 * over the listing that holds this description), then with the marker.
 */
export const serverInfoDescription = (marker: string): string =>
  `Identify this server: name, version, the names and counts of the tools it serves, and the marker of its tool catalog. The catalog marker when this tool list was published: ${marker}. If a call returns a different catalog.marker, the tool list you hold is stale: do not call this server's other tools; tell the user to refresh the app's actions (reconnect) first.`

/**
 * server_info (beyond the reference; docs/deviations.md): read-only, no arguments, no failure.
 * The answer is a thunk because it holds the marker, which is computed over this tool's own
 * listing entry; it is fixed at startup and only read at call time.
 */
export const serverInfoTool = (answer: () => ServerInfoOutput): AnyTool =>
  defineTool({
    name: SERVER_INFO,
    title: "Server and tool-catalog identity",
    description: serverInfoDescription(MARKER_PLACEHOLDER),
    annotations: READ_ANNOTATIONS,
    input: ServerInfoInput,
    output: ServerInfoOutput,
    run: () => Effect.sync(answer),
    audit: (_input, output) => ({
      catalog_marker: output.catalog.marker,
      tool_count: output.catalog.tool_count
    }),
    unexpected: "READ_FAILED"
  })
