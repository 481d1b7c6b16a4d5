import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { type McpHttp, makeTempTree, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The checks in front of the SDK (issue 9, reference §1.5): Host allowlist → 421, a foreign
 * Origin → 403, a missing or wrong bearer token → 401 with WWW-Authenticate; /healthz needs no
 * session and no token; sessions are found by id (unknown → 404) and a bare GET never disturbs
 * one. Against the real built server on an ephemeral port.
 */
const TOKEN = "s3cret-token-0123456789abcdef"
let tree: TempTree
let mcp: McpHttp

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}
const ACCEPT = { "content-type": "application/json", accept: "application/json, text/event-stream" }

beforeAll(async () => {
  tree = makeTempTree()
  tree.file("a.txt", "alpha\n")
  const tokenFile = path.join(tree.root, "..", `token-${process.pid}`)
  fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  mcp = await startMcpHttp(
    {
      WORKDIR_01_ALIAS: "w",
      WORKDIR_01_PATH: tree.root,
      SERVERFS_HTTP_TOKEN_FILE: tokenFile,
      SERVERFS_HTTP_ALLOWED_ORIGINS: "https://chat.example.com"
    },
    { token: TOKEN }
  )
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const rawRequest = (
  port: number,
  target: string,
  headers: Record<string, string>,
  body: string
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: target, method: "POST", headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        text += chunk
      })
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on("error", reject)
    req.end(body)
  })

const auth = () => ({ authorization: `Bearer ${TOKEN}` })

describe("the HTTP guards", () => {
  it("refuses a Host that is not allowed with 421, on /mcp and /healthz alike", async () => {
    // fetch may not set Host; node:http sends the header as given, as a rebinding browser would.
    for (const target of ["/mcp", "/healthz"]) {
      const res = await rawRequest(
        mcp.port,
        target,
        { ...ACCEPT, ...auth(), host: "attacker.example" },
        JSON.stringify(INIT)
      )
      expect(res.status).toBe(421)
      expect(res.body).not.toContain("attacker")
    }
  })

  it("refuses a foreign Origin with 403 and lets the allowed one through", async () => {
    const foreign = await fetch(mcp.url, {
      method: "POST",
      headers: { ...ACCEPT, ...auth(), origin: "https://evil.example" },
      body: JSON.stringify(INIT)
    })
    expect(foreign.status).toBe(403)
    const client = await mcp.connect({ origin: "https://chat.example.com" })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain("list_workdirs")
    await client.close()
  })

  it("refuses a missing or wrong token with 401 and WWW-Authenticate", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: `Basic ${TOKEN}` }]) {
      const res = await fetch(mcp.url, {
        method: "POST",
        headers: { ...ACCEPT, ...headers },
        body: JSON.stringify(INIT)
      })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="serverfs"')
    }
  })

  it("answers /healthz without a token or a session, and 404 elsewhere", async () => {
    const res = await fetch(`${mcp.origin}/healthz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: "ok" })
    expect((await fetch(`${mcp.origin}/other`, { headers: auth() })).status).toBe(404)
  })

  it("answers an unknown session id with 404, and a bare GET neither opens a session nor disturbs one", async () => {
    const unknown = await fetch(mcp.url, {
      method: "POST",
      headers: { ...ACCEPT, ...auth(), "mcp-session-id": "00000000-0000-0000-0000-000000000000" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
    })
    expect(unknown.status).toBe(404)
    // The main client's session lives on through a bare GET (no session id) and a foreign DELETE.
    const bare = await fetch(mcp.url, { headers: { ...auth(), accept: "text/event-stream" } })
    expect(bare.status).toBe(400)
    await bare.body?.cancel()
    const result = await mcp.client.callTool({
      name: "read_text_file",
      arguments: { workdir: "w", path: "a.txt" }
    })
    expect(result.isError).not.toBe(true)
    expect(JSON.stringify(result.content)).toContain("alpha")
  })

  it("audits every call with transport http and never the token", async () => {
    await mcp.client.callTool({ name: "list_workdirs", arguments: {} })
    const records = await mcp.auditWhen((rs) =>
      rs.some((r) => r.event === "tool_call" && r.tool === "list_workdirs")
    )
    const calls = records.filter((r) => r.event === "tool_call")
    expect(calls.length).toBeGreaterThan(0)
    for (const call of calls) expect(call.transport).toBe("http")
    const all = mcp.stderrLines().join("\n")
    expect(all).not.toContain(TOKEN)
    expect(all).not.toContain("127.0.0.1:")
    expect(all).not.toContain(tree.root)
  })
})
