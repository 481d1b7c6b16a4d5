#!/usr/bin/env node
// `npm run demo`: starts serverfs-mcp on the embedded demo workdir and drives it over stdio
// with the MCP SDK client, printing what a chat would see — including refused attacks.
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { demoEnv, root } from "./demo-env.mjs"

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, "apps/mcp/dist/bundle/serverfs-mcp.js")],
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...demoEnv }
})
const client = new Client({ name: "serverfs-demo", version: "1.0.0" })
await client.connect(transport)

const show = (title, value) =>
  console.log(`\n== ${title}\n${typeof value === "string" ? value : JSON.stringify(value, null, 2)}`)
const call = async (name, args = {}) => {
  const result = await client.callTool({ name, arguments: args })
  return result.isError ? result.content[0].text : result.structuredContent
}

const { tools } = await client.listTools()
show("tools", tools.map((t) => t.name).join(", "))
show("list_workdirs", await call("list_workdirs"))
show("list_directory demo:", await call("list_directory", { workdir: "demo" }))
show("find_files *.md", await call("find_files", { workdir: "demo", pattern: "*.md" }))
show(
  'search_text "hello" (case-insensitive)',
  await call("search_text", { workdir: "demo", query: "hello", case_sensitive: false })
)
show(
  "read_text_file notes.txt (2 lines)",
  await call("read_text_file", { workdir: "demo", path: "notes.txt", max_lines: 2 })
)
show("stat_file src/greeting.ts", await call("stat_file", { workdir: "demo", path: "src/greeting.ts" }))
const resource = await client.readResource({ uri: "serverfs://demo/docs/getting-started.md" })
show("resource serverfs://demo/docs/getting-started.md", resource.contents[0].text)
show("refused: ../../etc/passwd", await call("read_text_file", { workdir: "demo", path: "../../etc/passwd" }))
show("refused: /etc/passwd", await call("read_text_file", { workdir: "demo", path: "/etc/passwd" }))
show("refused: .env", await call("read_text_file", { workdir: "demo", path: ".env" }))
show("refused: unknown workdir", await call("list_directory", { workdir: "prod" }))
await client.close()
console.log("\nDemo finished: the server answered over stdio and refused every escape.")
