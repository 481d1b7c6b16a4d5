import { type ChildProcess, spawn } from "node:child_process"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, type Scope } from "effect"
import { auditReader, jsonObjectLines } from "./JsonLines.js"
import { mcpMain } from "./RepoPaths.js"

/**
 * The real `serverfs-mcp` process serving Streamable HTTP (SERVERFS_MCP_TRANSPORT=http) on an
 * ephemeral loopback port, with an MCP SDK client connected to it: what a remote chat client
 * sees. The port comes from the server's `http_listening` stderr line; stderr (the JSON audit log)
 * is collected line by line for assertions.
 */
export interface McpHttp {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** `http://127.0.0.1:<port>`: for /healthz and raw requests. */
  readonly origin: string
  readonly port: number
  readonly pid: number
  /** Connected unless `connect: false` was asked for. */
  readonly client: Client
  /** Another SDK client on its own session (with the bearer token, if one was given). */
  readonly connect: (headers?: Record<string, string>) => Promise<Client>
  readonly stderrLines: () => ReadonlyArray<string>
  readonly audit: () => ReadonlyArray<Record<string, unknown>>
  /** The audit records once `ready` holds for them (or after `timeoutMs`, as they are then). */
  readonly auditWhen: (
    ready: (records: ReadonlyArray<Record<string, unknown>>) => boolean,
    timeoutMs?: number
  ) => Promise<ReadonlyArray<Record<string, unknown>>>
  /** The exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>
  /** Close every client, SIGTERM the server and wait for its exit. */
  readonly close: () => Promise<void>
  /** Send a signal; resolves with the exit code (or signal name) once the process has ended. */
  readonly kill: (signal?: NodeJS.Signals) => Promise<number | string>
}

export interface McpHttpOptions {
  /** Bearer token the clients send (the server reads its own from SERVERFS_HTTP_TOKEN_FILE). */
  readonly token?: string
  /** Connect `client` (default true); false leaves it unconnected, for raw-request tests. */
  readonly connect?: boolean
  /** Longest wait for the listening line (default 60 s: a loaded CI machine starts Node slowly). */
  readonly startTimeoutMs?: number
}

const exitOf = (child: ChildProcess): Promise<number | string> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else if (child.signalCode !== null) resolve(child.signalCode)
    else child.once("exit", (code, signal) => resolve(code ?? signal ?? -1))
  })

/** The listening line's port, or the exit code if the process stopped first (a configuration error). */
const waitListening = (
  child: ChildProcess,
  lines: () => ReadonlyArray<string>,
  timeoutMs: number
): Promise<number> =>
  new Promise((resolve, reject) => {
    const check = () => {
      for (const record of jsonObjectLines(lines())) {
        if (record.event === "http_listening" && typeof record.port === "number") {
          done()
          resolve(record.port)
          return
        }
      }
    }
    const exited = (code: number | null, signal: string | null) => {
      done()
      reject(new Error(`serverfs-mcp exited (${code ?? signal}) before listening:\n${lines().join("\n")}`))
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`serverfs-mcp did not listen within ${timeoutMs} ms:\n${lines().join("\n")}`))
    }, timeoutMs)
    const done = () => {
      clearTimeout(timer)
      child.stderr?.off("data", check)
      child.off("exit", exited)
    }
    child.stderr?.on("data", check)
    child.once("exit", exited)
    check()
  })

export const startMcpHttp = async (
  env: Record<string, string>,
  options: McpHttpOptions = {}
): Promise<McpHttp> => {
  const child = spawn(process.execPath, [mcpMain], {
    // A clean environment: nothing from the developer's shell leaks into the server's config.
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      SERVERFS_MCP_TRANSPORT: "http",
      SERVERFS_HTTP_PORT: "0",
      ...env
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exited = exitOf(child)
  const stderrLines = () => stderr.split("\n").filter((l) => l !== "")
  const pid = child.pid
  if (pid === undefined) throw new Error("serverfs-mcp did not start")
  let port: number
  try {
    port = await waitListening(child, stderrLines, options.startTimeoutMs ?? 60_000)
  } catch (e) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    throw e
  }
  const origin = `http://127.0.0.1:${port}`
  const url = `${origin}/mcp`
  const clients: Array<Client> = []
  const connect = async (headers: Record<string, string> = {}) => {
    const auth: Record<string, string> =
      options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { ...auth, ...headers } }
    })
    const client = new Client({ name: "serverfs-test", version: "0.0.0" })
    await client.connect(transport)
    clients.push(client)
    return client
  }
  const client =
    options.connect === false ? new Client({ name: "serverfs-test", version: "0.0.0" }) : await connect()
  const { audit, auditWhen } = auditReader(stderrLines)
  const kill = (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  const close = async () => {
    await Promise.allSettled(clients.map((c) => c.close()))
    const stopped = kill("SIGTERM")
    // A server that does not stop within the grace is killed, so a failing test cannot leak it.
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
    await stopped
    clearTimeout(timer)
  }
  return { url, origin, port, pid, client, connect, stderrLines, audit, auditWhen, exited, close, kill }
}

/** The HTTP server for as long as the enclosing Scope lasts (`it.scoped`): closed by its finalizer. */
export const scopedMcpHttp = (
  env: Record<string, string>,
  options: McpHttpOptions = {}
): Effect.Effect<McpHttp, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startMcpHttp(env, options)),
    (mcp) => Effect.promise(mcp.close)
  )
