import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { AuditSink } from "@serverfs/telemetry-local"
import { errorCodeOf, makeTempTree, repoRoot, type TempTree, textOf } from "@serverfs/testkit"
import { ConfigProvider, Effect, Fiber, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fileIngressLayer } from "../../src/ingress/FileIngressLive.js"
import { mcpServerLayerWith } from "../../src/Layers.js"
import { McpServer } from "../../src/McpServer.js"
import { certificate, PUBLIC_ADDRESS, startServer, type TestServer } from "./support.js"

/**
 * upload_binary_file's `file` source end to end: an MCP client → the real tool pipeline → the
 * real fetcher process → a loopback HTTPS server, reached only through the test allowance that
 * no configuration can set. What arrives is written; what is refused leaves nothing behind.
 */
const MAX_BYTES = 4096
const BODY = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251))

let tree: TempTree
let server: TestServer
let runtime: ManagedRuntime.ManagedRuntime<McpServer, unknown>
let client: Client
let serving: Fiber.RuntimeFiber<void, unknown>

beforeAll(async () => {
  tree = makeTempTree("serverfs-ingress-upload-")
  tree.dir("in")
  server = await startServer(certificate(), PUBLIC_ADDRESS)
  server.route("/ok", (_req, res) => res.writeHead(200, { "content-length": BODY.length }).end(BODY))
  server.route("/to-private", (_req, res) =>
    res.writeHead(302, { location: `https://private.example.test:${server.port}/ok` }).end()
  )
  server.route("/big", (_req, res) => res.writeHead(200).end(Buffer.alloc(MAX_BYTES + 1, 7)))
  const ingress = fileIngressLayer({
    allowedHosts: ["files.example.test", "private.example.test"],
    allowOpenaiBlobHosts: false,
    maxRedirects: 3,
    fetchTimeoutSeconds: 10,
    timeoutSeconds: 20,
    fetcherPath: path.join(repoRoot, "apps/mcp/dist/bundle/fetcher.js"),
    testAllowance: {
      caPem: server.caPem,
      port: server.port,
      publicAddresses: [PUBLIC_ADDRESS],
      dnsAnswers: { "files.example.test": [[PUBLIC_ADDRESS]], "private.example.test": [["127.0.0.1"]] }
    }
  })
  const env = {
    WORKDIR_01_ALIAS: "rw",
    WORKDIR_01_PATH: tree.root,
    WORKDIR_01_READ_ONLY: "false",
    WORKDIR_01_BINARY_TRANSFER_ENABLED: "true",
    WORKDIR_01_MAX_BINARY_TRANSFER_BYTES: String(MAX_BYTES)
  }
  runtime = ManagedRuntime.make(
    mcpServerLayerWith(ingress).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
      Layer.provideMerge(AuditSink.memory().layer)
    )
  )
  const mcp = await runtime.runPromise(McpServer)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  serving = runtime.runFork(mcp.serve(serverSide, () => undefined))
  client = new Client({ name: "ingress-upload-test", version: "0.0.0" })
  await client.connect(clientSide)
}, 60_000)

afterAll(async () => {
  await client?.close()
  if (serving !== undefined) await runtime.runPromise(Fiber.interrupt(serving).pipe(Effect.asVoid))
  await runtime?.dispose()
  await server?.close()
  tree?.remove()
})

const upload = (route: string, target: string, host = "files.example.test") =>
  client.callTool({
    name: "upload_binary_file",
    arguments: {
      workdir: "rw",
      path: target,
      file: {
        download_url: `https://${host}:${server.port}${route}`,
        file_id: "file-1",
        file_name: "../../x"
      }
    }
  })

describe("upload_binary_file from a chat file, through the real fetcher", () => {
  it("advertises openai/fileParams on the tool while ingress is on", async () => {
    const { tools } = await client.listTools()
    expect(tools.find((t) => t.name === "upload_binary_file")?._meta).toEqual({
      "openai/fileParams": ["file"]
    })
  })

  it("writes exactly the fetched bytes at the caller's path (file_name chooses nothing)", async () => {
    const result = await upload("/ok", "in/a.bin")
    expect(result.isError).not.toBe(true)
    const out = result.structuredContent as { created: boolean; bytes_written: number; sha256: string }
    expect(out.created).toBe(true)
    expect(out.bytes_written).toBe(BODY.length)
    expect(out.sha256).toBe(createHash("sha256").update(BODY).digest("hex"))
    expect(fs.readFileSync(path.join(tree.root, "in/a.bin")).equals(BODY)).toBe(true)
    expect(fs.existsSync(path.join(tree.base, "x"))).toBe(false)
  })

  it("a redirect to a host that resolves to loopback → ADDRESS_NOT_ALLOWED, nothing written", async () => {
    const result = await upload("/to-private", "refused.bin")
    expect(errorCodeOf(textOf(result))).toBe("ADDRESS_NOT_ALLOWED")
    expect(textOf(result)).not.toContain("example.test")
    expect(fs.existsSync(path.join(tree.root, "refused.bin"))).toBe(false)
  })

  it("a body over max_binary_transfer_bytes → BINARY_PAYLOAD_TOO_LARGE, nothing written", async () => {
    const result = await upload("/big", "big.bin")
    expect(errorCodeOf(textOf(result))).toBe("BINARY_PAYLOAD_TOO_LARGE")
    expect(fs.existsSync(path.join(tree.root, "big.bin"))).toBe(false)
  })
})
