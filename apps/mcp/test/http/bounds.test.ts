import { type McpHttp, makeTempTree, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeSession, listTools, openSession, rawExchange } from "./support.js"

/**
 * Bounded everything (issue 9): the body limit is counted as the body arrives (declared, chunked,
 * or a Content-Length that lies), a client trickling its headers is cut off, sessions are capped
 * and an idle one expires. Liveness bounds only (seconds), no timing assertions.
 */
let tree: TempTree
let mcp: McpHttp
const MAX_BODY = 7_340_032 + 65_536

beforeAll(async () => {
  tree = makeTempTree()
  tree.file("a.txt", "alpha\n")
  mcp = await startMcpHttp(
    {
      WORKDIR_01_ALIAS: "w",
      WORKDIR_01_PATH: tree.root,
      SERVERFS_HTTP_MAX_BODY_BYTES: String(MAX_BODY),
      SERVERFS_HTTP_HEADERS_TIMEOUT_SECONDS: "2",
      SERVERFS_HTTP_REQUEST_TIMEOUT_SECONDS: "4",
      SERVERFS_HTTP_MAX_SESSIONS: "3",
      SERVERFS_HTTP_SESSION_IDLE_SECONDS: "2"
    },
    { connect: false }
  )
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const hostHeader = () => `Host: 127.0.0.1:${mcp.port}\r\n`

describe("the HTTP bounds", () => {
  it("refuses a declared oversized body with 413 before reading it", async () => {
    const head = `POST /mcp HTTP/1.1\r\n${hostHeader()}Content-Type: application/json\r\nContent-Length: ${MAX_BODY + 1}\r\n\r\n`
    const { text } = await rawExchange(mcp.port, head, () => undefined, 20_000)
    expect(text).toMatch(/^HTTP\/1\.1 413 /)
  })

  it("cuts a chunked body off at the limit with 413", async () => {
    const head = `POST /mcp HTTP/1.1\r\n${hostHeader()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    const chunk = Buffer.alloc(1_048_576, 0x20)
    const { text } = await rawExchange(
      mcp.port,
      head,
      (socket) => {
        // One MiB chunks until the server stops the connection (well past the limit otherwise).
        let sent = 0
        const pump = () => {
          while (sent < 20 && !socket.destroyed) {
            sent++
            const ok =
              socket.write(`${chunk.length.toString(16)}\r\n`) && socket.write(chunk) && socket.write("\r\n")
            if (!ok) {
              socket.once("drain", pump)
              return
            }
          }
        }
        pump()
      },
      30_000
    )
    expect(text).toMatch(/^HTTP\/1\.1 413 /)
  })

  it("never passes a body whose Content-Length lies (chunked underneath) to the SDK", async () => {
    const head = `POST /mcp HTTP/1.1\r\n${hostHeader()}Content-Type: application/json\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n`
    const { text } = await rawExchange(
      mcp.port,
      head,
      (socket) => socket.write(`${(MAX_BODY + 10).toString(16)}\r\n${" ".repeat(65_536)}`),
      20_000
    )
    expect(text).toMatch(/^HTTP\/1\.1 (400|413) /)
  })

  it("refuses an oversized request head with 431", async () => {
    const head = `GET /healthz HTTP/1.1\r\n${hostHeader()}X-Big: ${"a".repeat(20_000)}\r\n\r\n`
    const { text } = await rawExchange(mcp.port, head, () => undefined, 20_000)
    expect(text).toMatch(/^HTTP\/1\.1 431 /)
  })

  it("cuts off a client that trickles its headers (slowloris)", async () => {
    let timer: NodeJS.Timeout | undefined
    const { closed, text } = await rawExchange(
      mcp.port,
      `POST /mcp HTTP/1.1\r\n${hostHeader()}`,
      (socket) => {
        timer = setInterval(() => socket.write("X-Slow: y\r\n"), 300)
      },
      20_000
    )
    clearInterval(timer)
    expect(closed).toBe(true)
    expect(text).not.toMatch(/^HTTP\/1\.1 2/)
  })

  it("caps concurrent sessions with 503 and a JSON-RPC error, and frees a slot on DELETE", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const id = await openSession(mcp.url)
      expect(typeof id).toBe("string")
      ids.push(id as string)
    }
    const refused = await openSession(mcp.url)
    expect(typeof refused).not.toBe("string")
    const res = refused as Response
    expect(res.status).toBe(503)
    expect(res.headers.get("content-type")).toContain("application/json")
    expect(await closeSession(mcp.url, ids[0] as string)).toBe(200)
    const again = await openSession(mcp.url)
    expect(typeof again).toBe("string")
    for (const id of [...ids.slice(1), again as string]) await closeSession(mcp.url, id)
  })

  it("expires an idle session: its id then gets 404", async () => {
    const id = (await openSession(mcp.url)) as string
    expect((await listTools(mcp.url, id)).status).toBe(200)
    // Idle time is 2 s, checked every 0.5 s: well gone after 8 s (a liveness bound). Any request
    // would count as activity, so the session is left alone until then.
    await new Promise((resolve) => setTimeout(resolve, 8_000))
    const status = (await listTools(mcp.url, id)).status
    expect(status).toBe(404)
  }, 30_000)
})
