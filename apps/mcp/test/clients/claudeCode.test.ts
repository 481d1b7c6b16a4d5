/**
 * Claude Code as an operator sets it up (docs/clients.md "Claude Code"): the real CLI from the
 * Agent SDK package registers serverfs-mcp with `claude mcp add` and health-checks it with
 * `claude mcp list`, which starts the server and runs the MCP handshake without any model.
 * HOME and CLAUDE_CONFIG_DIR are a throwaway sandbox; the API points at a closed loopback port.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  bundledClaudeBinary,
  type ClaudeSandbox,
  makeClaudeSandbox,
  makeTempTree,
  mcpMain,
  type TempTree
} from "@serverfs/testkit"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  decodeJson,
  excerpt,
  McpServersFile,
  runCommand,
  serverCommand,
  startHttpServer,
  titleUnless
} from "./support.js"

let tree: TempTree
let sandbox: ClaudeSandbox

beforeEach(() => {
  tree = makeTempTree("sfc-claude-")
  tree.file("notes.txt", "hello\n")
  // Port 9 (discard) on loopback: nothing listens, so a stray API call fails at once, offline.
  sandbox = makeClaudeSandbox("http://127.0.0.1:9", "sfc-claude-home-")
})

afterEach(() => {
  sandbox?.remove()
  tree?.remove()
})

const claudeBinary = (() => {
  try {
    return bundledClaudeBinary()
  } catch {
    return undefined
  }
})()

const claude = (args: ReadonlyArray<string>) =>
  runCommand(claudeBinary ?? "claude", args, { env: sandbox.env, cwd: tree.base })

const addStdio = (workdirPath: string) =>
  claude([
    "mcp",
    "add",
    "serverfs",
    "--scope",
    "user",
    "-e",
    "WORKDIR_01_ALIAS=main",
    "-e",
    `WORKDIR_01_PATH=${workdirPath}`,
    "--",
    serverCommand.command,
    ...serverCommand.args
  ])

const userServers = () =>
  decodeJson(McpServersFile, fs.readFileSync(path.join(sandbox.configDir, ".claude.json"), "utf8")).mcpServers

describe.skipIf(claudeBinary === undefined)(
  titleUnless(
    "Claude Code: claude mcp add / claude mcp list",
    claudeBinary,
    "the Agent SDK's Claude Code binary"
  ),
  () => {
    it("stdio: the added server is stored as documented and `claude mcp list` reports it Connected", async () => {
      const added = await addStdio(tree.root)
      expect(added.code, excerpt(added.stderr)).toBe(0)
      // The same entry docs/clients.md shows for .mcp.json / the user config.
      expect(userServers().serverfs).toEqual({
        type: "stdio",
        command: "node",
        args: [mcpMain],
        env: { WORKDIR_01_ALIAS: "main", WORKDIR_01_PATH: tree.root }
      })
      const listed = await claude(["mcp", "list"])
      expect(listed.code, excerpt(listed.stderr)).toBe(0)
      expect(listed.stdout).toMatch(/^serverfs: node .*serverfs-mcp\.js - ✔ Connected$/m)
    }, 180_000)

    it("stdio, a configuration error: `claude mcp list` says Failed and the reason is in Claude's MCP log", async () => {
      const added = await addStdio(path.join(tree.base, "missing"))
      expect(added.code, excerpt(added.stderr)).toBe(0)
      const listed = await claude(["mcp", "list"])
      expect(listed.stdout).toMatch(/^serverfs: .* - ✘ Failed to connect/m)
      expect(listed.stdout).not.toContain("Connected")
      // docs/clients.md "Where the server's errors show": $XDG_CACHE_HOME/claude-cli-nodejs/<project>/mcp-logs-serverfs/.
      const logs = path.join(sandbox.env.XDG_CACHE_HOME ?? "", "claude-cli-nodejs")
      const logText = fs
        .readdirSync(logs, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && path.basename(entry.parentPath) === "mcp-logs-serverfs")
        .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name), "utf8"))
        .join("\n")
      expect(logText).toContain("configuration error: WORKDIR_01_PATH")
    }, 180_000)

    it("http: `claude mcp add --transport http` with the bearer header, and `claude mcp list` reports it Connected (a wrong token: HTTP 401)", async () => {
      const http = await startHttpServer(tree)
      try {
        const added = await claude([
          "mcp",
          "add",
          "--transport",
          "http",
          "--scope",
          "user",
          "serverfs",
          http.url,
          "--header",
          `Authorization: Bearer ${http.token}`
        ])
        expect(added.code, excerpt(added.stderr)).toBe(0)
        expect(userServers().serverfs).toEqual({
          type: "http",
          url: http.url,
          headers: { Authorization: `Bearer ${http.token}` }
        })
        const listed = await claude(["mcp", "list"])
        expect(listed.code, excerpt(listed.stderr)).toBe(0)
        expect(listed.stdout).toMatch(/^serverfs: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected$/m)
        expect(listed.stdout).not.toContain(http.token)
        // The same entry with a wrong token: the health check hits the token check (401).
        const removed = await claude(["mcp", "remove", "serverfs", "--scope", "user"])
        expect(removed.code, excerpt(removed.stderr)).toBe(0)
        const wrong = await claude([
          "mcp",
          "add",
          "--transport",
          "http",
          "--scope",
          "user",
          "serverfs",
          http.url,
          "--header",
          "Authorization: Bearer not-the-token-at-all"
        ])
        expect(wrong.code, excerpt(wrong.stderr)).toBe(0)
        const refused = await claude(["mcp", "list"])
        expect(refused.stdout).toMatch(/^serverfs: .* - ✘ Failed to connect .*\(HTTP 401\)/m)
      } finally {
        await http.mcp.close()
      }
    }, 180_000)
  }
)
