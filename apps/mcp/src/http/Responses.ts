import type { ServerResponse } from "node:http"

/**
 * Refusals written before the SDK sees a request: a JSON-RPC error body (id null), as the SDK's
 * own refusals are, so an MCP client shows the message. No refusal echoes a header, the token or
 * an address.
 */
export const refuse = (
  res: ServerResponse,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  closeConnection = false
): void => {
  if (res.headersSent) {
    res.end()
    return
  }
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null })
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...(closeConnection ? { connection: "close" } : {}),
    ...headers
  })
  res.end(body)
}

export const healthy = (res: ServerResponse, method: string | undefined): void => {
  const body = JSON.stringify({ status: "ok" })
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(method === "HEAD" ? undefined : body)
}
