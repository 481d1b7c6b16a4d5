import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { type HttpServerProcess, startHttpServerProcess } from "./HttpServerProcess.js"

/** How to start one MCP server over stdio. */
export interface ServerLaunch {
  readonly label: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

const STDERR_TAIL = 4096

/**
 * One MCP session, driven with the SDK's Client and StdioClientTransport for every server alike
 * (or, for serverfs-mcp's HTTP rows, StreamableHTTPClientTransport against its own process). Timed calls go through `client.request(tools/call)`, which parses the JSON-RPC result
 * with the SDK's CallToolResultSchema but skips the client-side output-schema check: that is
 * client work, and it would only add the same constant to every server.
 */
export class McpSession {
  private stderrTail = ""

  private constructor(
    readonly launch: ServerLaunch,
    private readonly client: Client,
    private readonly processId: () => number | null,
    private readonly stop: () => Promise<void> = async () => undefined,
    private readonly stderrOf?: () => string
  ) {}

  /** Spawn the server and complete the initialize handshake. */
  static async start(launch: ServerLaunch): Promise<McpSession> {
    const transport = new StdioClientTransport({
      command: launch.command,
      args: [...launch.args],
      env: { ...launch.env },
      stderr: "pipe"
    })
    const client = new Client({ name: "serverfs-bench", version: "0.1.0" })
    const session = new McpSession(launch, client, () => transport.pid)
    transport.stderr?.on("data", (chunk: Buffer) => {
      session.stderrTail = (session.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL)
    })
    await client.connect(transport)
    return session
  }

  /**
   * The same server over Streamable HTTP: spawned with SERVERFS_MCP_TRANSPORT=http on an
   * ephemeral loopback port, one SDK session on `/mcp`; `close` ends the session, then SIGTERMs it.
   */
  static async startHttp(launch: ServerLaunch): Promise<McpSession> {
    const server: HttpServerProcess = await startHttpServerProcess(launch)
    const client = new Client({ name: "serverfs-bench", version: "0.1.0" })
    const label = `${launch.label} (HTTP)`
    const session = new McpSession({ ...launch, label }, client, () => server.pid, server.stop, server.stderr)
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    } catch (error) {
      await server.stop()
      throw error
    }
    return session
  }

  get pid(): number {
    const pid = this.processId()
    if (pid === null) throw new Error(`${this.launch.label}: no process`)
    return pid
  }

  /** What the server wrote on stderr lately (for failure reports). */
  get stderr(): string {
    return this.stderrOf?.() ?? this.stderrTail
  }

  async listToolNames(): Promise<ReadonlyArray<string>> {
    const { tools } = await this.client.listTools()
    return tools.map((t) => t.name)
  }

  /** A timed tool call; a tool error is a benchmark failure, never a fast sample. */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const result = await this.client.request(
      { method: "tools/call", params: { name, arguments: args } },
      CallToolResultSchema,
      { timeout: 120_000 }
    )
    if (result.isError === true) {
      const text = result.content.map((c) => (c.type === "text" ? c.text : c.type)).join(" ")
      throw new Error(`${this.launch.label} ${name} failed: ${text.slice(0, 500)}`)
    }
    return result
  }

  /** A tool call whose error result is an outcome, not a failure (the hostile rows expect codes). */
  async attempt(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return this.client.request(
      { method: "tools/call", params: { name, arguments: args } },
      CallToolResultSchema,
      { timeout: 120_000 }
    )
  }

  /** A protocol round trip that no tool code handles: the transport and SDK floor. */
  async ping(): Promise<void> {
    await this.client.ping({ timeout: 120_000 })
  }

  /** The same call through `client.callTool`, which also checks the output schema (sanity pass). */
  async callValidated(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const result = await this.client.callTool({ name, arguments: args }, CallToolResultSchema, {
      timeout: 120_000
    })
    if (result.isError === true) throw new Error(`${this.launch.label} ${name} failed`)
    return result as CallToolResult
  }

  async close(): Promise<void> {
    await this.client.close()
    await this.stop()
  }
}

/** structuredContent as a record (both servers return one for every tool used here). */
export const structured = (result: CallToolResult): Record<string, unknown> => {
  const content = result.structuredContent
  if (content === undefined || content === null) throw new Error("tool returned no structuredContent")
  return content
}
