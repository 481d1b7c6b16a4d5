import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, type Scope } from "effect"
import { auditReader } from "./JsonLines.js"
import { startMcpHttp } from "./McpHttp.js"
import { mcpMain } from "./RepoPaths.js"

/**
 * The real `serverfs-mcp` process with an MCP SDK client attached: what a chat client sees. stderr
 * (the JSON audit log) is collected line by line for assertions. Over stdio by default; with
 * `SERVERFS_TEST_MCP_TRANSPORT=http` in the test runner's environment (the vitest project
 * `mcp-over-http`), over Streamable HTTP on an ephemeral loopback port — so the same contract tests
 * prove both transports.
 */
export interface McpProcess {
  /** The transport the client speaks to this server. */
  readonly transport: McpTestTransport
  readonly client: Client
  readonly pid: number
  readonly stderrLines: () => ReadonlyArray<string>
  /** Audit records parsed from stderr. */
  readonly audit: () => ReadonlyArray<Record<string, unknown>>
  /**
   * The audit records once `ready` holds for them (or after `timeoutMs`, as they are then). The
   * server writes a call's audit line before its response, but stderr and stdout are separate
   * pipes: the line can reach this process just after the response does.
   */
  readonly auditWhen: (
    ready: (records: ReadonlyArray<Record<string, unknown>>) => boolean,
    timeoutMs?: number
  ) => Promise<ReadonlyArray<Record<string, unknown>>>
  readonly close: () => Promise<void>
}

export type McpTestTransport = "stdio" | "http"

/** The transport `startMcp` uses in this test run: `SERVERFS_TEST_MCP_TRANSPORT`, stdio unless "http". */
export const mcpTestTransport = (): McpTestTransport =>
  process.env.SERVERFS_TEST_MCP_TRANSPORT === "http" ? "http" : "stdio"

/**
 * The server over Streamable HTTP, seen through the McpProcess interface: `close` closes the
 * client's session and then SIGTERMs the server (over stdio, closing the client ends the server).
 */
const startOverHttp = async (env: Record<string, string>): Promise<McpProcess> => {
  // The bound the stdio path has too (the SDK's 60 s initialize timeout): a start on a loaded
  // two-core machine can take well over 20 s.
  const http = await startMcpHttp(env, { startTimeoutMs: 60_000 })
  const { client, pid, stderrLines, audit, auditWhen, close } = http
  return { transport: "http", client, pid, stderrLines, audit, auditWhen, close }
}

export const startMcp = async (
  env: Record<string, string>,
  command: ReadonlyArray<string> = [],
  main: string = mcpMain
): Promise<McpProcess> => {
  // A wrapper command (run as another user, under a tracer) is a stdio-only concern.
  if (mcpTestTransport() === "http" && command.length === 0) return startOverHttp(env)
  const transport = new StdioClientTransport({
    command: command[0] ?? process.execPath,
    args: command.length > 0 ? [...command.slice(1), main] : [main],
    // A clean environment: nothing from the developer's shell leaks into the server's config.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const client = new Client({ name: "serverfs-test", version: "0.0.0" })
  await client.connect(transport)
  const pid = transport.pid
  if (pid === null) throw new Error("server did not start")
  const stderrLines = () => stderr.split("\n").filter((l) => l !== "")
  const { audit, auditWhen } = auditReader(stderrLines)
  return { transport: "stdio", client, pid, stderrLines, audit, auditWhen, close: () => client.close() }
}

/** The MCP process for as long as the enclosing Scope lasts (`it.scoped`): closed by its finalizer. */
export const scopedMcp = (
  env: Record<string, string>,
  command: ReadonlyArray<string> = []
): Effect.Effect<McpProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startMcp(env, command)),
    (mcp) => Effect.promise(mcp.close)
  )
