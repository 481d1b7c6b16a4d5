import { spawn } from "node:child_process"
import * as path from "node:path"
import { mcpMain, repoRoot } from "@serverfs/testkit"

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

/** A string shown in a failure message without the temp paths of this run. */
export const excerpt = (text: string): string => text.slice(-2_000)
