import { spawnSync } from "node:child_process"
import * as os from "node:os"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { eventuallyAsync, mcpMain } from "@serverfs/testkit"
import { describe, expect, it } from "vitest"

/**
 * A client that spawns a misconfigured serverfs-mcp learns why it stopped: its initialize is
 * answered with the configuration line (not just "connection closed"), the server still exits
 * with code 2 after the documented stderr lines, and nothing is served.
 */
const connectMisconfigured = async (env: Record<string, string>) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpMain],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const client = new Client({ name: "serverfs-test", version: "0.0.0" })
  const error = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e
  )
  // Both stderr lines are written before the reply; the pipe may deliver them after it.
  await eventuallyAsync("the startup_failed line", () =>
    stderr.includes('"startup_failed"') ? true : undefined
  )
  await client.close()
  return { error, stderr }
}

describe("a configuration error reaches the client", () => {
  it("initialize is answered with the configuration line, without the value; exit after the stderr lines", async () => {
    const secretPath = "relative/secret-host-dir"
    const { error, stderr } = await connectMisconfigured({
      WORKDIR_01_ALIAS: "docs",
      WORKDIR_01_PATH: secretPath
    })
    expect(error).toBeInstanceOf(McpError)
    const message = (error as McpError).message
    expect(message).toContain("ServerFS: configuration error: WORKDIR_01_PATH: must be an absolute path")
    expect(message).not.toContain(secretPath)
    // The documented stderr stays: the human line, then the startup_failed audit line.
    expect(stderr).toMatch(/^ServerFS: configuration error: WORKDIR_01_PATH: must be an absolute path\n\{/)
  })

  it("the reply is the only stdout frame, then exit code 2; with no request nothing is written", () => {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      WORKDIR_01_ALIAS: "docs",
      WORKDIR_01_PATH: os.tmpdir(),
      WORKDIR_01_READ_ONLY: "maybe"
    }
    const initialize = `${JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
    })}\n`
    const answered = spawnSync(process.execPath, [mcpMain], {
      env,
      input: initialize,
      encoding: "utf8",
      timeout: 30_000
    })
    expect(answered.status).toBe(2)
    const frames = answered.stdout.split("\n").filter((l) => l !== "")
    expect(frames).toHaveLength(1)
    expect(JSON.parse(frames[0] ?? "")).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32000,
        message: expect.stringMatching(/^ServerFS: configuration error: WORKDIR_01_READ_ONLY: /)
      }
    })
    const silent = spawnSync(process.execPath, [mcpMain], {
      env,
      input: "",
      encoding: "utf8",
      timeout: 30_000
    })
    expect(silent.status).toBe(2)
    expect(silent.stdout).toBe("")
  })
})
