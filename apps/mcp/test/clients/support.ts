import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { type McpHttp, mcpMain, repoRoot, startMcpHttp, type TempTree } from "@serverfs/testkit"
import { Schema } from "effect"

/**
 * Running a real MCP client's own command line (claude, codex, the MCP Inspector CLI) the way an
 * operator would paste it from docs/clients.md, with a clean environment: nothing from the
 * developer's shell (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, tokens) reaches the client.
 */
export interface CommandResult {
  /** The exit code, or the signal name when the command was killed (the bound ran out). */
  readonly code: number | string
  readonly stdout: string
  readonly stderr: string
}

export interface CommandOptions {
  readonly env: Record<string, string>
  readonly cwd: string
  /** Liveness bound: the command is killed after this long (default 90 s; CI machines are slow). */
  readonly timeoutMs?: number
}

export const runCommand = (
  command: string,
  args: ReadonlyArray<string>,
  options: CommandOptions
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    // Asynchronous on purpose: a fake API server a client talks to runs in this very process.
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.env },
      // stdin closed: `codex exec` otherwise waits for more prompt text on it.
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 90_000)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? signal ?? -1, stdout, stderr })
    })
  })

/** The stdio command every client is given: the built entry point, never `npm run` (its banner goes to stdout). */
export const serverCommand = { command: "node", args: [mcpMain] } as const

/** The MCP Inspector's CLI client (devDependency @modelcontextprotocol/inspector-cli). */
export const inspectorCli = path.join(repoRoot, "node_modules", ".bin", "mcp-inspector-cli")

/**
 * A describe title that says why its block is skipped: the clients are npm devDependencies, so
 * CI always has them; only an install without them (`npm ci --omit=dev`) skips.
 */
export const titleUnless = (title: string, binary: string | undefined, what: string): string =>
  binary !== undefined && fs.existsSync(binary) ? title : `${title} — skipped: ${what} is not installed`

/** A string shown in a failure message without the temp paths of this run. */
export const excerpt = (text: string): string => text.slice(-2_000)

/** serverfs-mcp over Streamable HTTP on an ephemeral loopback port, with a bearer token file. */
export interface HttpServer {
  readonly mcp: McpHttp
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  readonly token: string
}

/**
 * The server as docs/clients.md runs it for HTTP clients: SERVERFS_MCP_TRANSPORT=http, the token
 * in a 0600 file, workdir `main` = the tree's root. The testkit reads the port from the
 * `http_listening` line (SERVERFS_HTTP_PORT=0); the Host allowlist is the loopback default.
 */
export const startHttpServer = async (tree: TempTree): Promise<HttpServer> => {
  const token = randomBytes(24).toString("hex")
  const tokenFile = path.join(tree.base, "mcp-token")
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 })
  const mcp = await startMcpHttp(
    { WORKDIR_01_ALIAS: "main", WORKDIR_01_PATH: tree.root, SERVERFS_HTTP_TOKEN_FILE: tokenFile },
    // A loaded CI machine can take tens of seconds to start node; the bound is liveness only.
    { token, connect: false, startTimeoutMs: 60_000 }
  )
  return { mcp, url: mcp.url, token }
}

/** A client's JSON output (or file), decoded at the boundary: fails the test on anything else. */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I>, text: string): A =>
  Schema.decodeUnknownSync(Schema.parseJson(schema))(text)

/** The MCP server entries of a client's JSON configuration (Claude Code's ~/.claude.json). */
export const McpServersFile = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
