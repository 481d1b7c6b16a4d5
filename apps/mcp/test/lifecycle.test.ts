import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { makeTempTree, mcpMain, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * Process-level contract of serverfs-mcp: stdout carries protocol frames only, the process ends
 * cleanly on stdin EOF and SIGTERM, and a bad configuration stops it with exit code 2 and one
 * stderr line naming the variable.
 */
let tree: TempTree

beforeAll(() => {
  tree = makeTempTree()
  tree.file("a.txt", "alpha\n")
})
afterAll(() => tree.remove())

const baseEnv = () => ({
  PATH: process.env.PATH ?? "/usr/bin",
  WORKDIR_01_ALIAS: "w",
  WORKDIR_01_PATH: tree.root
})

const frames = (requests: ReadonlyArray<Record<string, unknown>>) =>
  [
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    ...requests
  ]
    .map((r) => JSON.stringify(r))
    .join("\n") + "\n"

const runToEof = (env: Record<string, string>, input: string) =>
  spawnSync(process.execPath, [mcpMain], { env, input, encoding: "utf8", timeout: 30_000 })

/**
 * A configuration error's stderr: exactly two lines — the human line, then one `startup_failed`
 * JSON audit line (tool-contracts §7) naming the variable and nothing else of the value.
 */
const configurationFailure = (stderr: string, variable: string): string => {
  const lines = stderr.split("\n").filter((l) => l !== "")
  expect(lines).toHaveLength(2)
  const audit = JSON.parse(lines[1] ?? "") as Record<string, unknown>
  expect(Object.keys(audit).sort()).toEqual(["event", "level", "reason", "timestamp", "variable"])
  expect(audit).toMatchObject({
    level: "ERROR",
    event: "startup_failed",
    reason: "configuration error",
    variable
  })
  expect(audit.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  return `${lines[0]}\n`
}

describe("process lifecycle", () => {
  it("stdout carries only JSON-RPC frames, even for failing calls; all requests answered on EOF", () => {
    const requests = [
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "search_text", arguments: { workdir: "w", query: "alpha" } }
      },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "read_text_file", arguments: { workdir: "w", path: "/etc/passwd" } }
      },
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "nope", arguments: {} } },
      { jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: "serverfs://w/missing" } },
      {
        jsonrpc: "2.0",
        id: 6,
        method: "tools/call",
        params: { name: "list_directory", arguments: { workdir: "w", bogus: 1 } }
      }
    ]
    const result = runToEof(baseEnv(), frames(requests))
    expect(result.status).toBe(0)
    const lines = result.stdout.split("\n").filter((l) => l !== "")
    for (const line of lines) {
      const frame = JSON.parse(line) as { jsonrpc?: string }
      expect(frame.jsonrpc).toBe("2.0")
    }
    const ids = lines.map((l) => (JSON.parse(l) as { id?: number }).id).filter((id) => id !== undefined)
    expect([...ids].sort()).toEqual([0, 1, 2, 3, 4, 5, 6])
    // stderr is JSON lines only.
    for (const line of result.stderr.split("\n").filter((l) => l !== ""))
      expect(() => JSON.parse(line)).not.toThrow()
  })

  it("logs the SERVERFS_/WORKDIR_ variables nothing reads, by name only, and still starts", () => {
    const result = runToEof({ ...baseEnv(), WORKDIR_01_READONLY: "false", SERVERFS_SEARCH_TIMEOUT: "9" }, "")
    expect(result.status).toBe(0)
    const records = result.stderr
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { event?: string; level?: string; names?: unknown })
    const warning = records.find((r) => r.event === "unknown_variables")
    expect(warning).toMatchObject({
      level: "WARNING",
      names: ["SERVERFS_SEARCH_TIMEOUT", "WORKDIR_01_READONLY"]
    })
    expect(result.stderr).not.toContain('"9"')
    expect(runToEof(baseEnv(), "").stderr).not.toContain("unknown_variables")
  })

  it("exits 0 on SIGTERM", async () => {
    const child = spawn(process.execPath, [mcpMain], { env: baseEnv(), stdio: ["pipe", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString()
    })
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (stderr.includes('"event":"startup"')) {
          clearInterval(check)
          resolve()
        }
      }, 20)
    })
    const code = await new Promise<number | null>((resolve) => {
      child.on("exit", (c) => resolve(c))
      child.kill("SIGTERM")
    })
    expect(code).toBe(0)
  })

  it.each([
    ["WORKDIR_01_READ_ONLY", { WORKDIR_01_READ_ONLY: "maybe" }],
    ["WORKDIR_01_PATH", { WORKDIR_01_PATH: "/definitely/not/here-secret" }],
    ["SERVERFS_MAX_READ_BYTES", { SERVERFS_MAX_READ_BYTES: "-5" }],
    ["WORKDIR_03_ALIAS", { WORKDIR_03_ALIAS: "w", WORKDIR_03_PATH: "/tmp" }],
    ["SERVERFS_AGENT_BRIDGE_ENABLED", { SERVERFS_AGENT_MODE: "review", SERVERFS_AGENT_RUNTIMES: "fake" }]
  ])(
    "a bad %s stops startup with exit 2, one line naming it and one startup_failed audit line",
    (variable, overrides) => {
      const result = runToEof({ ...baseEnv(), ...overrides }, "")
      expect(result.status).toBe(2)
      expect(result.stdout).toBe("")
      const human = configurationFailure(result.stderr, variable)
      expect(human).toMatch(new RegExp(`^ServerFS: configuration error: ${variable}: `))
      expect(result.stderr).not.toContain("here-secret")
    }
  )

  it("reads the .env file named by SERVERFS_ENV_FILE; the environment wins", () => {
    const envFile = `${tree.base}/serverfs.env`
    fs.writeFileSync(
      envFile,
      `# ServerFS\nWORKDIR_02_ALIAS=fromfile\nWORKDIR_02_PATH=${tree.root}\nWORKDIR_01_ALIAS=overridden\n`
    )
    const requests = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_workdirs", arguments: {} } }
    ]
    const result = runToEof({ ...baseEnv(), SERVERFS_ENV_FILE: envFile }, frames(requests))
    const reply = result.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map(
        (l) =>
          JSON.parse(l) as { id?: number; result?: { structuredContent?: { workdirs: { alias: string }[] } } }
      )
      .find((f) => f.id === 1)
    expect(reply?.result?.structuredContent?.workdirs.map((w) => w.alias)).toEqual(["w", "fromfile"])
  })

  it("a stray line in the .env file (issue 14: it swallowed the deny glob's name) → exit 2, the line number, not its text", () => {
    const envFile = `${tree.base}/stray.env`
    fs.writeFileSync(envFile, "# deny list\nleaked-secret-token\nSERVERFS_EXTRA_DENY_GLOBS=a.txt\n")
    const result = runToEof({ ...baseEnv(), SERVERFS_ENV_FILE: envFile }, "")
    expect(result.status).toBe(2)
    expect(result.stdout).toBe("")
    expect(configurationFailure(result.stderr, "SERVERFS_ENV_FILE")).toBe(
      'ServerFS: configuration error: SERVERFS_ENV_FILE: line 2: not a NAME=value line (no "=")\n'
    )
  })

  it("an unterminated quote in the .env file → exit 2 naming its line", () => {
    const envFile = `${tree.base}/quote.env`
    fs.writeFileSync(envFile, 'WORKDIR_01_DESCRIPTION="half\nSERVERFS_EXTRA_DENY_GLOBS=a.txt\n')
    const result = runToEof({ ...baseEnv(), SERVERFS_ENV_FILE: envFile }, "")
    expect(result.status).toBe(2)
    expect(configurationFailure(result.stderr, "SERVERFS_ENV_FILE")).toMatch(
      /^ServerFS: configuration error: SERVERFS_ENV_FILE: line 1: [^\n]*not closed[^\n]*\n$/
    )
    expect(result.stderr).not.toContain("half")
  })

  it.each([
    [
      "the same directory twice",
      { WORKDIR_01_READ_ONLY: "false", WORKDIR_02_ALIAS: "again" },
      "",
      "is the same directory as WORKDIR_01_PATH"
    ],
    [
      "a read-only workdir inside a read-write one",
      { WORKDIR_01_READ_ONLY: "false", WORKDIR_02_ALIAS: "sub" },
      "/sub",
      "is inside WORKDIR_01_PATH"
    ]
  ])(
    "overlapping workdirs: %s → exit 2, one line naming the variables, no host path",
    (_, extra, below, relation) => {
      fs.mkdirSync(`${tree.root}/sub`, { recursive: true })
      const result = runToEof({ ...baseEnv(), ...extra, WORKDIR_02_PATH: `${tree.root}${below}` }, "")
      expect(result.status).toBe(2)
      expect(result.stdout).toBe("")
      expect(configurationFailure(result.stderr, "WORKDIR_02_PATH")).toBe(
        `ServerFS: configuration error: WORKDIR_02_PATH: ${relation} (workdir "w"); overlapping workdirs must all be read-only with Agent delegation disabled\n`
      )
      expect(result.stderr).not.toContain(tree.base)
    }
  )

  it("/ as a read-write workdir → exit 2", () => {
    const result = runToEof(
      { ...baseEnv(), WORKDIR_02_ALIAS: "host", WORKDIR_02_PATH: "/", WORKDIR_02_READ_ONLY: "false" },
      ""
    )
    expect(result.status).toBe(2)
    expect(configurationFailure(result.stderr, "WORKDIR_02_PATH")).toMatch(
      /^ServerFS: configuration error: WORKDIR_02_PATH: is the filesystem root, [^\n]*\n$/
    )
  })

  it("an unreadable SERVERFS_ENV_FILE is a configuration error", () => {
    const result = runToEof({ ...baseEnv(), SERVERFS_ENV_FILE: `${tree.base}/missing.env` }, "")
    expect(result.status).toBe(2)
    expect(configurationFailure(result.stderr, "SERVERFS_ENV_FILE")).toMatch(
      /^ServerFS: configuration error: SERVERFS_ENV_FILE: /
    )
    expect(result.stderr).not.toContain(tree.base)
  })
})
