import * as net from "node:net"

/** Raw Streamable HTTP helpers for the attack and bound tests (the SDK client hides these). */
export const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}
export const ACCEPT = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** A session opened with raw requests (no GET stream, so only its own requests keep it alive). */
export const openSession = async (
  url: string,
  headers: Record<string, string> = {}
): Promise<Response | string> => {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...ACCEPT, ...headers },
    body: JSON.stringify(INIT)
  })
  await res.text()
  const id = res.headers.get("mcp-session-id")
  if (res.status !== 200 || id === null) return res
  const done = await fetch(url, {
    method: "POST",
    headers: { ...ACCEPT, ...headers, "mcp-session-id": id },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
  })
  await done.text()
  return id
}

export const listTools = (url: string, id: string) =>
  fetch(url, {
    method: "POST",
    headers: { ...ACCEPT, "mcp-session-id": id },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
  })

export const closeSession = async (url: string, id: string) => {
  const res = await fetch(url, { method: "DELETE", headers: { "mcp-session-id": id } })
  await res.text()
  return res.status
}

/**
 * Writes `head` and then whatever `more` produces on a raw socket; resolves with everything the
 * server sent once it closes the connection (or after `limitMs`, with `closed: false`).
 */
export const rawExchange = (
  port: number,
  head: string,
  more: (socket: net.Socket) => void,
  limitMs: number
): Promise<{ readonly text: string; readonly closed: boolean }> =>
  new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let text = ""
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ text, closed: false })
    }, limitMs)
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => {
      text += chunk
    })
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ text, closed: true })
    })
    socket.write(head, () => more(socket))
  })
