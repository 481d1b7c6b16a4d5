/**
 * The MCP Inspector's CLI mode (docs/clients.md "MCP Inspector"): `--cli <command> --method
 * tools/list` and `--method tools/call`, each a fresh connection that prints the JSON result on
 * stdout. The CLI is @modelcontextprotocol/inspector-cli, the client `mcp-inspector --cli` runs.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { makeTempTree, type TempTree } from "@serverfs/testkit"
import { Schema } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  decodeJson,
  excerpt,
  inspectorCli,
  runCommand,
  serverCommand,
  startHttpServer,
  titleUnless
} from "./support.js"

let tree: TempTree
let cwd: string

beforeEach(() => {
  tree = makeTempTree("sfc-inspector-")
  tree.file("notes.txt", "line one\nline two\n")
  // inspector-cli 1.0.3 tests `fs.existsSync("../package.json")` against the working directory
  // (to find its own package.json, which it then imports relative to itself): run it from a
  // directory whose parent holds one, as it is when run from inside a project.
  cwd = path.join(tree.base, "project", "run")
  fs.mkdirSync(cwd, { recursive: true })
  fs.writeFileSync(path.join(tree.base, "project", "package.json"), "{}\n")
})

afterEach(() => {
  tree?.remove()
})

const stdioTarget = () => [
  "--cli",
  "-e",
  "WORKDIR_01_ALIAS=main",
  "-e",
  `WORKDIR_01_PATH=${tree.root}`,
  serverCommand.command,
  ...serverCommand.args
]

const run = (args: ReadonlyArray<string>) => runCommand(inspectorCli, args, { env: { HOME: tree.base }, cwd })

/** What the CLI prints for tools/list and tools/call (the MCP results, as JSON). */
const InspectorResult = Schema.Struct({
  tools: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String }))),
  structuredContent: Schema.optional(Schema.Unknown),
  isError: Schema.optional(Schema.Boolean)
})

const inspector = async (args: ReadonlyArray<string>) => {
  const result = await run(args)
  expect(result.code, excerpt(result.stderr)).toBe(0)
  return decodeJson(InspectorResult, result.stdout)
}

describe.skipIf(!fs.existsSync(inspectorCli))(
  titleUnless("MCP Inspector CLI", inspectorCli, "@modelcontextprotocol/inspector-cli"),
  () => {
    it("stdio: tools/list lists the serverfs tools", async () => {
      const listed = await inspector([...stdioTarget(), "--method", "tools/list"])
      const names = (listed.tools ?? []).map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(["list_workdirs", "read_text_file", "search_text"]))
    }, 120_000)

    it("stdio: tools/call read_text_file returns the file's lines as structured content", async () => {
      const called = await inspector([
        ...stdioTarget(),
        "--method",
        "tools/call",
        "--tool-name",
        "read_text_file",
        "--tool-arg",
        "workdir=main",
        "--tool-arg",
        "path=notes.txt"
      ])
      expect(called.isError ?? false).toBe(false)
      expect(called.structuredContent).toMatchObject({
        workdir: "main",
        path: "notes.txt",
        content: "line one\nline two\n"
      })
    }, 120_000)

    it("http: tools/list and tools/call with the bearer header; a wrong token is refused", async () => {
      const http = await startHttpServer(tree)
      try {
        const target = (token: string) => [
          "--cli",
          http.url,
          "--transport",
          "http",
          "--header",
          `Authorization: Bearer ${token}`
        ]
        const listed = await inspector([...target(http.token), "--method", "tools/list"])
        const names = (listed.tools ?? []).map((t) => t.name)
        expect(names).toEqual(expect.arrayContaining(["list_workdirs", "read_text_file"]))
        const called = await inspector([
          ...target(http.token),
          "--method",
          "tools/call",
          "--tool-name",
          "read_text_file",
          "--tool-arg",
          "workdir=main",
          "--tool-arg",
          "path=notes.txt"
        ])
        expect(called.structuredContent).toMatchObject({ content: "line one\nline two\n" })
        const refused = await run([...target("not-the-token-at-all"), "--method", "tools/list"])
        expect(refused.code).not.toBe(0)
        expect(refused.stdout).not.toContain("list_workdirs")
      } finally {
        await http.mcp.close()
      }
    }, 180_000)
  }
)
