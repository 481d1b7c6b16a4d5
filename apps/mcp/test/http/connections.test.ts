import * as net from "node:net"
import { eventuallyAsync, type McpHttp, makeTempTree, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * Connections are a bounded resource too (issue 9): a client that opens TCP connections and
 * never sends a byte must not hold them — nor, at the connection cap, lock every other client
 * out. Node's own head timeout starts only at the first byte; the server closes a connection
 * that has not delivered a request head within the head timeout. Liveness bounds only.
 */
let tree: TempTree
let mcp: McpHttp
const CAP = 8

beforeAll(async () => {
  tree = makeTempTree()
  mcp = await startMcpHttp(
    {
      WORKDIR_01_ALIAS: "w",
      WORKDIR_01_PATH: tree.root,
      SERVERFS_HTTP_MAX_CONNECTIONS: String(CAP),
      SERVERFS_HTTP_HEADERS_TIMEOUT_SECONDS: "2",
      SERVERFS_HTTP_REQUEST_TIMEOUT_SECONDS: "4"
    },
    { connect: false }
  )
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

/** A connection that sends nothing; resolves `closed` when the server ends it. */
const silentConnection = (port: number) => {
  const socket = net.connect(port, "127.0.0.1")
  socket.on("error", () => undefined)
  socket.resume()
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
  return { socket, closed }
}

describe("silent connections", () => {
  it("beyond the cap are closed at once; within it, after the head timeout; then the server answers again", async () => {
    const connections = Array.from({ length: CAP * 3 }, () => silentConnection(mcp.port))
    try {
      // Everything is closed by the server within a liveness bound (the head timeout is 2 s).
      await Promise.race([
        Promise.all(connections.map((c) => c.closed)),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error("silent connections still open")), 30_000)
        )
      ])
      const health = await eventuallyAsync(
        "the readiness endpoint answers",
        async () => {
          const response = await fetch(`http://127.0.0.1:${mcp.port}/healthz`).catch(() => undefined)
          return response?.status === 200 ? response.status : undefined
        },
        10_000
      )
      expect(health).toBe(200)
    } finally {
      for (const c of connections) c.socket.destroy()
    }
  }, 60_000)
})
