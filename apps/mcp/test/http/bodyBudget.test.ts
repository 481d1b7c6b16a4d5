import type * as net from "node:net"
import { type McpHttp, makeTempTree, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeSession, openSession, rawExchange } from "./support.js"

/**
 * Attack: each request body is bounded on its own, but many clients sending one body just under
 * the limit at the same time would add up (512 connections × 12 MiB by default). The shared
 * budget (SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES) refuses the body that would go past it with 503,
 * and what the others held is given back when they end. Liveness bounds only (seconds).
 */
let tree: TempTree
let mcp: McpHttp
const MAX_BODY = 7_340_032 + 65_536
const BUDGET = 2 * MAX_BODY
const SENT = MAX_BODY - 4096

beforeAll(async () => {
  tree = makeTempTree()
  tree.file("a.txt", "alpha\n")
  mcp = await startMcpHttp(
    {
      WORKDIR_01_ALIAS: "w",
      WORKDIR_01_PATH: tree.root,
      SERVERFS_HTTP_MAX_BODY_BYTES: String(MAX_BODY),
      SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES: String(BUDGET),
      SERVERFS_HTTP_REQUEST_TIMEOUT_SECONDS: "120"
    },
    { connect: false }
  )
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const head = () =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${mcp.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${MAX_BODY}\r\n\r\n`

/** Sends `SENT` bytes of a body it never finishes; resolves once they are all written. */
const sendMostOfABody = (socket: net.Socket): Promise<void> =>
  new Promise((resolve) => {
    const piece = Buffer.alloc(262_144, 0x20)
    let left = SENT
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        const n = Math.min(left, piece.length)
        left -= n
        if (!socket.write(piece.subarray(0, n))) {
          socket.once("drain", pump)
          return
        }
      }
      resolve()
    }
    pump()
  })

describe("the shared request-body budget", () => {
  it("refuses the body that would go past it with 503, and frees what ended connections held", async () => {
    // Three clients each send most of a body and never finish: two fit the budget together, the
    // third cannot (whichever the server reads last).
    const sockets: Array<net.Socket> = []
    const exchanges = [0, 1, 2].map((i) =>
      rawExchange(
        mcp.port,
        head(),
        (socket) => {
          sockets[i] = socket
          void sendMostOfABody(socket)
        },
        120_000
      ).then((result) => ({ i, ...result }))
    )
    const refused = await Promise.race(exchanges)
    expect(refused.closed).toBe(true)
    expect(refused.text).toMatch(/^HTTP\/1\.1 503 /)
    expect(refused.text).toContain("too many request bytes in flight")
    expect(refused.text.toLowerCase()).toContain("retry-after: 1")
    // The two others are still being received, not refused.
    const others = sockets.filter((_, i) => i !== refused.i)
    expect(others.every((socket) => !socket.destroyed)).toBe(true)

    // They give up: their bytes go back to the budget, and an ordinary client gets in.
    for (const socket of others) socket.destroy()
    const rest = await Promise.all(exchanges)
    expect(rest.filter((r) => r.text.startsWith("HTTP/1.1 503 ")).length).toBe(1)
    const id = await openSession(mcp.url)
    expect(typeof id).toBe("string")
    await closeSession(mcp.url, id as string)
  }, 180_000)
})
