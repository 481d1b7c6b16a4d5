import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { repoRoot } from "@serverfs/testkit"
import { describe, expect, it } from "vitest"

/**
 * The command README gives for connecting an MCP client to the embedded demo writes protocol
 * frames only on stdout (`npm run serve:demo` without --silent prints npm's banner there first,
 * which a client reads as a broken frame). The test spawns exactly the README's commands.
 */
const CLIENT_COMMAND = "node scripts/serve-demo.mjs"
const NPM_COMMAND = "npm run --silent serve:demo"

const frames = [
  {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 1, method: "tools/list" }
]

// Each run starts npm and/or two node processes; a loaded 2-core machine needs a generous bound.
/** Runs a shell command from the repository root, feeds it the frames, returns stdout at EOF. */
const runToEof = (command: string) =>
  new Promise<{ readonly code: number | null; readonly stdout: string }>((resolve, reject) => {
    const child = spawn("sh", ["-c", command], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
      stdio: ["pipe", "pipe", "ignore"]
    })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout }))
    child.stdin.end(`${frames.map((f) => JSON.stringify(f)).join("\n")}\n`)
  })

const expectProtocolOnly = (stdout: string) => {
  const lines = stdout.split("\n").filter((l) => l !== "")
  for (const line of lines) expect((JSON.parse(line) as { jsonrpc?: unknown }).jsonrpc).toBe("2.0")
  const answered = lines.map((l) => (JSON.parse(l) as { id?: number }).id).filter((id) => id !== undefined)
  expect([...answered].sort()).toEqual([0, 1])
}

describe("serve:demo for an MCP client", () => {
  it("README gives both commands", () => {
    const readme = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8")
    expect(readme).toContain(`\`${CLIENT_COMMAND}\``)
    expect(readme).toContain(`\`${NPM_COMMAND}\``)
  })

  it(`${CLIENT_COMMAND}: every stdout line is a JSON-RPC frame`, async () => {
    const run = await runToEof(CLIENT_COMMAND)
    expect(run.code).toBe(0)
    expectProtocolOnly(run.stdout)
  }, 180_000)

  it(`${NPM_COMMAND}: every stdout line is a JSON-RPC frame`, async () => {
    const run = await runToEof(NPM_COMMAND)
    expect(run.code).toBe(0)
    expectProtocolOnly(run.stdout)
  }, 180_000)
})
