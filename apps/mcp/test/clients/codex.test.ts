/**
 * Codex as an operator sets it up (docs/clients.md "Codex"): `codex mcp add` writes the
 * config.toml entry. `codex mcp list` only lists that configuration — it never starts the
 * server — so the connection is proven with `codex exec` against the loopback fake Responses
 * API: the scripted "model" calls serverfs's `list_workdirs`, and the tool's real output comes
 * back in Codex's next request. CODEX_HOME and HOME are throwaway directories.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type CodexHome,
  cleanupCodexDaemon,
  codexBin,
  eventuallyAsync,
  type FakeReply,
  type FakeResponsesServer,
  makeCodexHome,
  makeTempTree,
  mcpMain,
  processesMentioning,
  type RecordedRequest,
  startFakeResponsesServer,
  type TempTree
} from "@serverfs/testkit"
import { Schema } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { decodeJson, excerpt, runCommand, serverCommand, startHttpServer, titleUnless } from "./support.js"

let tree: TempTree
let server: FakeResponsesServer
let home: CodexHome

beforeEach(async () => {
  tree = makeTempTree("sfc-codex-")
  tree.file("notes.txt", "hello\n")
  server = await startFakeResponsesServer()
  fs.mkdirSync(path.join(tree.base, "home"))
  // An unknown model slug: MCP tools are offered to the model directly, not behind tool_search.
  home = makeCodexHome({
    baseUrl: server.baseUrl,
    parent: path.join(tree.base, "home"),
    model: "fake-model",
    approvalPolicy: "never"
  })
})

afterEach(async () => {
  if (home !== undefined) await cleanupCodexDaemon(home.path)
  await server?.close()
  tree?.remove()
})

const codex = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  runCommand(codexBin, args, {
    env: { HOME: path.join(tree.base, "home"), CODEX_HOME: home.path, ...env },
    cwd: tree.root
  })

/** `codex mcp list --json`: one entry per configured server. */
const CodexList = Schema.Array(
  Schema.Struct({ name: Schema.String, enabled: Schema.Boolean, transport: Schema.Unknown })
)

/**
 * The "model": Codex may sample before the MCP server is up, so until `mcp__serverfs` is offered
 * it waits with a harmless command; then it calls list_workdirs once and answers with what it saw.
 */
const scriptOneToolCall = () => {
  let called = false
  const step = (request: RecordedRequest): FakeReply => {
    if (called) return { type: "message", text: `model saw: ${request.toolOutputs.at(-1)?.output ?? ""}` }
    if (!request.toolNames.includes("mcp__serverfs")) return { type: "shell", command: "sleep 0.3" }
    called = true
    return { type: "call", name: "list_workdirs", namespace: "mcp__serverfs", arguments: {} }
  }
  server.script(...Array.from({ length: 60 }, () => step))
}

/** `codex exec`: the scripted model calls serverfs's list_workdirs and sees the real result. */
const execCallsListWorkdirs = async (env: Record<string, string> = {}) => {
  scriptOneToolCall()
  const ran = await codex(["exec", "--skip-git-repo-check", "list the workdirs"], env)
  expect(ran.code, excerpt(ran.stderr)).toBe(0)
  expect(ran.stderr).toContain("mcp: serverfs/list_workdirs (completed)")
  expect(ran.stdout).toMatch(/^model saw: [\s\S]*"workdirs":\[\{"alias":"main"/)
  const sent = server.requests().flatMap((r) => r.toolOutputs.map((o) => o.output))
  expect(sent.some((output) => output.includes('"alias":"main"'))).toBe(true)
}

describe.skipIf(!fs.existsSync(codexBin))(
  titleUnless("Codex: codex mcp add, codex mcp list, codex exec", codexBin, "the Codex CLI (@openai/codex)"),
  () => {
    it("stdio: the added server is stored as documented, listed, and `codex exec` calls its tool", async () => {
      const added = await codex([
        "mcp",
        "add",
        "serverfs",
        "--env",
        "WORKDIR_01_ALIAS=main",
        "--env",
        `WORKDIR_01_PATH=${tree.root}`,
        "--",
        serverCommand.command,
        ...serverCommand.args
      ])
      expect(added.code, excerpt(added.stderr)).toBe(0)
      // The config.toml block docs/clients.md shows.
      expect(fs.readFileSync(home.configPath, "utf8")).toContain(
        [
          "[mcp_servers.serverfs]",
          'command = "node"',
          `args = ["${mcpMain}"]`,
          "",
          "[mcp_servers.serverfs.env]",
          'WORKDIR_01_ALIAS = "main"',
          `WORKDIR_01_PATH = "${tree.root}"`
        ].join("\n")
      )
      const listed = await codex(["mcp", "list", "--json"])
      expect(listed.code, excerpt(listed.stderr)).toBe(0)
      expect(decodeJson(CodexList, listed.stdout)).toMatchObject([
        { name: "serverfs", enabled: true, transport: { type: "stdio", command: "node", args: [mcpMain] } }
      ])

      await execCallsListWorkdirs()
      // Codex ends the server it started: nothing of this run (codex, serverfs-mcp) stays behind.
      await eventuallyAsync("no process of the run left", () =>
        processesMentioning(tree.base).length === 0 ? true : undefined
      )
    }, 180_000)

    it("stdio, a configuration error: the session has no serverfs tools; RUST_LOG=info shows the server's reason", async () => {
      const added = await codex([
        "mcp",
        "add",
        "serverfs",
        "--env",
        "WORKDIR_01_ALIAS=main",
        "--env",
        `WORKDIR_01_PATH=${path.join(tree.base, "missing")}`, // does not exist
        "--",
        serverCommand.command,
        ...serverCommand.args
      ])
      expect(added.code, excerpt(added.stderr)).toBe(0)
      // The "model" waits with a harmless command until the server Codex started has come and gone
      // (its environment names the missing path), so its stderr has reached Codex's log.
      const missing = path.join(tree.base, "missing")
      let seen = false
      const waitForServerExit = (): FakeReply => {
        const running = processesMentioning(missing).length > 0
        seen = seen || running
        return seen && !running
          ? { type: "message", text: "no tools" }
          : { type: "shell", command: "sleep 0.3" }
      }
      server.script(...Array.from({ length: 60 }, () => waitForServerExit))
      const ran = await codex(["exec", "--skip-git-repo-check", "list the workdirs"], { RUST_LOG: "info" })
      expect(ran.code, excerpt(ran.stderr)).toBe(0)
      // docs/clients.md "Codex": where the configuration error shows.
      expect(ran.stderr).toContain("MCP server stderr (node): ServerFS: configuration error: WORKDIR_01_PATH")
      expect(ran.stderr).not.toContain("mcp: serverfs/")
    }, 180_000)

    it("http: `codex mcp add --url --bearer-token-env-var`, listed, and `codex exec` calls its tool", async () => {
      const http = await startHttpServer(tree)
      try {
        const added = await codex([
          "mcp",
          "add",
          "serverfs",
          "--url",
          http.url,
          "--bearer-token-env-var",
          "SERVERFS_MCP_TOKEN"
        ])
        expect(added.code, excerpt(added.stderr)).toBe(0)
        expect(fs.readFileSync(home.configPath, "utf8")).toContain(
          [
            "[mcp_servers.serverfs]",
            `url = "${http.url}"`,
            'bearer_token_env_var = "SERVERFS_MCP_TOKEN"'
          ].join("\n")
        )
        const listed = await codex(["mcp", "list", "--json"])
        expect(listed.code, excerpt(listed.stderr)).toBe(0)
        expect(decodeJson(CodexList, listed.stdout)).toMatchObject([
          { name: "serverfs", enabled: true, transport: { type: "streamable_http", url: http.url } }
        ])
        // The token reaches Codex through its environment only, never through config.toml.
        expect(fs.readFileSync(home.configPath, "utf8")).not.toContain(http.token)
        await execCallsListWorkdirs({ SERVERFS_MCP_TOKEN: http.token })
      } finally {
        await http.mcp.close()
      }
    }, 180_000)
  }
)
