import * as fs from "node:fs"
import {
  errorCodeOf,
  type McpProcess,
  makeTempTree,
  startMcp,
  type TempTree,
  textOf
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The MCP server as a chat client sees it: a real `serverfs-mcp` child process over stdio,
 * driven by the MCP SDK Client (which also validates every structuredContent against the
 * advertised outputSchema).
 */
let tree: TempTree
let mcp: McpProcess

const READ_TOOLS = [
  "list_workdirs",
  "list_directory",
  "find_files",
  "search_text",
  "read_text_file",
  "stat_file"
]

beforeAll(async () => {
  tree = makeTempTree()
  tree.file("docs/guide/intro.md", "# Intro\nhello world\n")
  tree.file("docs/a b.txt", "spaced\n")
  tree.file("notes.txt", "line one\nline two\nline three\n")
  tree.file(".env", "SECRET=1\n")
  tree.file("%2E", "literal percent name\n")
  tree.file("big.txt", "x\n".repeat(50))
  tree.file("reports/quarterly-financial-report-2024-final-version.txt", "report\n")
  fs.mkdirSync(`${tree.base}/second`)
  fs.writeFileSync(`${tree.base}/second/other.txt`, "second workdir\n")
  mcp = await startMcp({
    WORKDIR_01_ALIAS: "main",
    WORKDIR_01_PATH: tree.root,
    WORKDIR_01_DESCRIPTION: "  the main tree  ",
    WORKDIR_02_ALIAS: "second",
    WORKDIR_02_PATH: `${tree.base}/second`,
    WORKDIR_02_READ_ONLY: "false",
    WORKDIR_02_MAX_READ_LINES: "10",
    SERVERFS_DEFAULT_LIST_LIMIT: "700",
    SERVERFS_MAX_LIST_ENTRIES: "300"
  })
})

afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const call = (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })

describe("serverfs-mcp over stdio", () => {
  it("identifies as ServerFS and gives instructions", () => {
    expect(mcp.client.getServerVersion()?.name).toBe("ServerFS")
    const instructions = mcp.client.getInstructions() ?? ""
    for (const phrase of [
      "list_workdirs",
      "relative",
      "untrusted",
      "read-write",
      "no shell",
      "server_info"
    ]) {
      expect(instructions).toContain(phrase)
    }
  })

  it("lists the six read tools with the reference annotations and inline schemas", async () => {
    const { tools } = await mcp.client.listTools()
    const names = tools.map((t) => t.name)
    for (const name of READ_TOOLS) expect(names).toContain(name)
    for (const tool of tools.filter((t) => READ_TOOLS.includes(t.name))) {
      expect(tool.annotations).toEqual({ readOnlyHint: true, openWorldHint: false })
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type).toBe("object")
      expect(JSON.stringify(tool.inputSchema)).not.toContain("$ref")
    }
  })

  it("advertises the effective default limit: min(default, max)", async () => {
    const { tools } = await mcp.client.listTools()
    const list = tools.find((t) => t.name === "list_directory")
    const limit = list?.inputSchema.properties?.limit as { default?: number } | undefined
    expect(limit?.default).toBe(300)
    const find = tools.find((t) => t.name === "find_files")
    const findLimit = find?.inputSchema.properties?.limit as { default?: number } | undefined
    expect(findLimit?.default).toBe(50)
  })

  it("list_workdirs: slot order, access, trimmed description, no host path", async () => {
    const result = await call("list_workdirs", {})
    expect(result.structuredContent).toEqual({
      workdirs: [
        {
          alias: "main",
          description: "the main tree",
          access: "read-only",
          binary_transfer: false,
          agent_mode: "disabled",
          agent_runtimes: []
        },
        {
          alias: "second",
          description: null,
          access: "read-write",
          binary_transfer: false,
          agent_mode: "disabled",
          agent_runtimes: []
        }
      ]
    })
    expect(JSON.stringify(result)).not.toContain(tree.base)
  })

  it("a success carries structuredContent and the same JSON as text", async () => {
    const result = await call("read_text_file", { workdir: "main", path: "notes.txt", max_lines: 2 })
    expect(result.isError).toBeFalsy()
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent)
    expect(result.structuredContent).toMatchObject({
      start_line: 1,
      end_line: 2,
      content: "line one\nline two\n",
      has_more: true,
      next_start_line: 3
    })
  })

  it("tool errors read `CODE: workdir:path — phrase`", async () => {
    const result = await call("read_text_file", { workdir: "main", path: "../etc/passwd" })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe(
      "PATH_OUTSIDE_WORKDIR: main:../etc/passwd — resolved path escapes the workdir"
    )
    const unknown = await call("stat_file", { workdir: "nope", path: "" })
    expect(textOf(unknown)).toBe("WORKDIR_NOT_FOUND: 'nope' is not a configured workdir")
    const hidden = await call("read_text_file", { workdir: "main", path: ".env" })
    expect(errorCodeOf(textOf(hidden))).toBe("HIDDEN_PATH_NOT_ALLOWED")
  })

  it.each([
    [{ workdir: "main", path: "", limit: 0 }, "limit"],
    [{ workdir: "main", path: "", limit: true }, "limit"],
    [{ workdir: "main", path: "", limit: 1.5 }, "limit"],
    [{ workdir: "main", path: "", offset: -1 }, "offset"],
    [{ workdir: "main", path: "", extra: 1 }, "extra"],
    [{ path: "" }, "workdir"],
    [{ workdir: 7 }, "workdir"]
  ])("invalid list_directory arguments %j → INVALID_ARGUMENT naming %s", async (args, field) => {
    const result = await call("list_directory", args)
    expect(result.isError).toBe(true)
    expect(errorCodeOf(textOf(result))).toBe("INVALID_ARGUMENT")
    expect(textOf(result)).toContain(field)
  })

  const LONG = "*?".repeat(512) + "Z" // 1025 characters, one over SERVERFS_MAX_PATTERN_LENGTH
  it.each([
    ["find_files", { workdir: "main", pattern: "*.md\u0000" }, "pattern", "must not contain NUL characters"],
    ["find_files", { workdir: "main", pattern: LONG }, "pattern", "must be at most 1024 characters long"],
    [
      "search_text",
      { workdir: "main", query: "x", glob: "*.md\u0000" },
      "glob",
      "must not contain NUL characters"
    ],
    [
      "search_text",
      { workdir: "main", query: "x", glob: "\u0000" },
      "glob",
      "must not contain NUL characters"
    ],
    [
      "search_text",
      { workdir: "main", query: "x", glob: LONG },
      "glob",
      "must be at most 1024 characters long"
    ]
  ])("%s with %j → INVALID_ARGUMENT naming %s, without echoing it", async (tool, args, field, problem) => {
    const result = await call(tool, args)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe(`INVALID_ARGUMENT: ${tool}: ${field} — ${problem}`)
  })

  it("find_files and search_text advertise the pattern bound (maxLength 1024)", async () => {
    const { tools } = await mcp.client.listTools()
    const property = (tool: string, name: string) =>
      JSON.stringify(tools.find((t) => t.name === tool)?.inputSchema.properties?.[name])
    expect(property("find_files", "pattern")).toContain('"maxLength":1024')
    expect(property("search_text", "glob")).toContain('"maxLength":1024')
  })

  it("attack: find_files with a pattern that backtracks as a RegExp ends at once; list_workdirs answers meanwhile", async () => {
    const started = performance.now()
    const hostile = ["*?*?*?*?*?*?*?*?*?*?*?*?Z", `${"*?".repeat(511)}Z`, `${"*?".repeat(24)}t`]
    const [a, b, c, workdirs] = await Promise.all([
      ...hostile.map((pattern) => call("find_files", { workdir: "main", path: "reports", pattern })),
      call("list_workdirs", {})
    ])
    expect(a?.structuredContent).toEqual({ matches: [], returned: 0, truncated: false })
    expect(b?.structuredContent).toEqual({ matches: [], returned: 0, truncated: false })
    expect(c?.structuredContent).toEqual({
      matches: [{ path: "reports/quarterly-financial-report-2024-final-version.txt" }],
      returned: 1,
      truncated: false
    })
    expect(workdirs?.isError).toBeFalsy()
    // Liveness only: the RegExp translation took minutes on the first pattern alone.
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it("the per-workdir line budget caps max_lines", async () => {
    fs.writeFileSync(`${tree.base}/second/many.txt`, "l\n".repeat(40))
    const result = await call("read_text_file", { workdir: "second", path: "many.txt", max_lines: 200 })
    expect(result.structuredContent).toMatchObject({ end_line: 10, has_more: true })
  })

  it("search_text and find_files return workdir-relative paths", async () => {
    const search = await call("search_text", { workdir: "main", query: "hello" })
    expect(search.structuredContent).toEqual({
      matches: [{ path: "docs/guide/intro.md", line: 2, text: "hello world" }],
      returned: 1,
      truncated: false
    })
    const find = await call("find_files", { workdir: "main", pattern: "*.md" })
    expect(find.structuredContent).toEqual({
      matches: [{ path: "docs/guide/intro.md" }],
      returned: 1,
      truncated: false
    })
  })

  it("find_files: a pattern with / is a path glob below `path` (**/*.md, docs/*/*.md); .env stays hidden", async () => {
    const deep = await call("find_files", { workdir: "main", pattern: "**/*.md" })
    expect(deep.structuredContent).toEqual({
      matches: [{ path: "docs/guide/intro.md" }],
      returned: 1,
      truncated: false
    })
    const anchored = await call("find_files", { workdir: "main", path: "docs", pattern: "*/*.md" })
    expect(anchored.structuredContent).toMatchObject({ matches: [{ path: "docs/guide/intro.md" }] })
    const tooShallow = await call("find_files", { workdir: "main", pattern: "*/*.md" })
    expect(tooShallow.structuredContent).toMatchObject({ returned: 0 })
    const hidden = await call("find_files", { workdir: "main", pattern: "**/.env" })
    expect(hidden.structuredContent).toMatchObject({ returned: 0 })
  })

  it("the resource template is listed and reads nested paths", async () => {
    const { resourceTemplates } = await mcp.client.listResourceTemplates()
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: "serverfs://{workdir}/{path}",
        name: "ServerFS file",
        mimeType: "text/plain"
      })
    ])
    const read = await mcp.client.readResource({ uri: "serverfs://main/docs/guide/intro.md" })
    expect(read.contents).toEqual([
      { uri: "serverfs://main/docs/guide/intro.md", mimeType: "text/plain", text: "# Intro\nhello world\n" }
    ])
    const spaced = await mcp.client.readResource({ uri: "serverfs://main/docs/a%20b.txt" })
    expect(spaced.contents[0]).toMatchObject({ text: "spaced\n" })
  })

  it("an encoded traversal in a resource URI is refused, never followed", async () => {
    for (const uri of [
      "serverfs://main/%2E%2E/outside/x",
      "serverfs://main/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "serverfs://main/docs/..%2F..%2F..%2Fetc%2Fpasswd"
    ]) {
      await expect(mcp.client.readResource({ uri })).rejects.toThrow(/PATH_OUTSIDE_WORKDIR/)
    }
    // Decoded once only: %252E is the literal name "%2E".
    const literal = await mcp.client.readResource({ uri: "serverfs://main/%252E" })
    expect(literal.contents[0]).toMatchObject({ text: "literal percent name\n" })
  })

  it("resource errors carry the same codes", async () => {
    // The wire message is the ServerFS text alone: the client adds its one prefix.
    await expect(mcp.client.readResource({ uri: "serverfs://nope/x" })).rejects.toThrow(
      /^MCP error -32002: WORKDIR_NOT_FOUND: /
    )
    await expect(mcp.client.readResource({ uri: "serverfs://main/.env" })).rejects.toThrow(
      /HIDDEN_PATH_NOT_ALLOWED/
    )
    await expect(mcp.client.readResource({ uri: "serverfs://main/docs" })).rejects.toThrow(/NOT_A_FILE/)
    await expect(mcp.client.readResource({ uri: "serverfs://second/many.txt" })).rejects.toThrow(
      /RESOURCE_TOO_LARGE/
    )
    await expect(mcp.client.readResource({ uri: "serverfs://main/%E0%A4%A" })).rejects.toThrow(
      /INVALID_ARGUMENT/
    )
  })

  it("writes exactly one audit line per tool call, with the §7 fields", async () => {
    const before = mcp.audit().filter((r) => r.event === "tool_call").length
    await call("stat_file", { workdir: "main", path: "notes.txt" })
    await call("search_text", { workdir: "main", query: "needle-never-logged" })
    await call("read_text_file", { workdir: "main", path: "missing.txt" })
    const toolCalls = (records: ReadonlyArray<Record<string, unknown>>) =>
      records.filter((r) => r.event === "tool_call")
    const lines = toolCalls(await mcp.auditWhen((records) => toolCalls(records).length >= before + 3)).slice(
      before
    )
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatchObject({
      tool: "stat_file",
      success: true,
      workdir: "main",
      path: "notes.txt",
      type: "file"
    })
    expect(lines[1]).toMatchObject({ tool: "search_text", success: true, returned: 0, truncated: false })
    expect(lines[2]).toMatchObject({ tool: "read_text_file", success: false, error_code: "PATH_NOT_FOUND" })
    for (const line of lines) {
      expect(line.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(line.level).toBe("INFO")
      expect(typeof line.duration_ms).toBe("number")
    }
    const all = mcp.stderrLines().join("\n")
    expect(all).not.toContain("needle-never-logged")
    expect(all).not.toContain("line one")
    expect(all).not.toContain(tree.base)
  })
})
