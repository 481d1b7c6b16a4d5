/**
 * A JSON-RPC error the SDK sends as it is: `code` and the ServerFS text (`CODE: detail`). The
 * SDK's own McpError writes "MCP error <code>: " into its message, which the server would send
 * and the client would prefix again ("MCP error -32602: MCP error -32602: …").
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}
