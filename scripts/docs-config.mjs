#!/usr/bin/env node
// Keeps docs in step with the schemas (STYLE.md practice 8):
// - docs/configuration.md: the variable table between the generated markers is rendered from
//   libs/policy's variable table (--write regenerates it, --check fails on any difference);
// - docs/errors.md must have a row for every code of libs/domain's frozen-error registry
//   (FROZEN_ERRORS: the filesystem plane's and the agent plane's), and no row for any other code;
// - docs/rpc.md's "by method" table must list exactly the errors of each method's contract
//   (BRIDGE_METHODS[method].errors);
// - docs/tools.md must have a section for every tool the MCP server can register: the read and
//   mutation tools, the agent tools and server_info.
// Runs against the built packages (npm run build first).
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const policy = await import(path.join(root, "libs/policy/dist/index.js"))
const domain = await import(path.join(root, "libs/domain/dist/index.js"))

const START = "<!-- generated:variables:start -->"
const END = "<!-- generated:variables:end -->"

const escapeCell = (text) => String(text).replaceAll("|", "\\|").replaceAll("\n", " ")

const renderTable = () => {
  const rows = policy
    .allVariableDocs()
    .map(
      (v) =>
        `| \`${v.variable}\` | ${escapeCell(v.scope)} | ${escapeCell(v.kind)} | ${v.default === "" ? "(empty)" : `\`${escapeCell(v.default)}\``} | ${escapeCell(v.description)} |`
    )
  return ["| Variable | Scope | Parser | Default | Meaning |", "|---|---|---|---|---|", ...rows].join("\n")
}

const problems = []
const mode = process.argv[2] ?? "--check"

// docs/configuration.md
const configPath = path.join(root, "docs/configuration.md")
const config = fs.readFileSync(configPath, "utf8")
const start = config.indexOf(START)
const end = config.indexOf(END)
if (start === -1 || end === -1 || end < start) {
  problems.push("docs/configuration.md: generated markers missing")
} else {
  const current = config.slice(start + START.length, end).trim()
  const wanted = renderTable()
  if (current !== wanted) {
    if (mode === "--write") {
      fs.writeFileSync(
        configPath,
        `${config.slice(0, start + START.length)}\n${wanted}\n${config.slice(end)}`
      )
      console.log("docs/configuration.md: variable table regenerated")
    } else {
      problems.push("docs/configuration.md: variable table is out of date (run npm run docs:config)")
    }
  }
}

// docs/errors.md: a row per registered code, and a code per row
const errors = fs.readFileSync(path.join(root, "docs/errors.md"), "utf8")
const registered = new Set(domain.FROZEN_ERROR_CODES)
for (const code of registered) {
  if (!errors.includes(`| \`${code}\` |`)) problems.push(`docs/errors.md: no row for ${code}`)
}
for (const [, code] of errors.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)) {
  if (!registered.has(code)) problems.push(`docs/errors.md: ${code} is not a registered frozen code`)
}

// docs/rpc.md: each method's row lists exactly the codes of its error set
const rpc = fs.readFileSync(path.join(root, "docs/rpc.md"), "utf8")
const tagsOf = (errorSet) => errorSet.classes.map((errorClass) => errorClass._tag)
for (const [method, contract] of Object.entries(domain.BRIDGE_METHODS)) {
  const row = rpc
    .split("\n")
    .find((line) => line.startsWith(`| \`${method}\` | `) && line.split("|").length === 4)
  if (row === undefined) {
    problems.push(`docs/rpc.md: no error row for ${method}`)
    continue
  }
  const listed = new Set([...row.split("|")[2].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]))
  const wanted = new Set(tagsOf(contract.errors))
  for (const code of wanted)
    if (!listed.has(code)) problems.push(`docs/rpc.md: ${method} does not list ${code}`)
  for (const code of listed)
    if (!wanted.has(code)) problems.push(`docs/rpc.md: ${method} lists ${code}, not in its contract`)
}

// docs/tools.md: a section per registered tool
const tools = fs.readFileSync(path.join(root, "docs/tools.md"), "utf8")
const mcp = await import(path.join(root, "apps/mcp/dist/index.js"))
const settings = { defaultListLimit: 1, maxListEntries: 1, defaultSearchResults: 1, maxSearchResults: 1 }
// agentTools only reads names here; a dummy context is enough (nothing is called).
const agentContext = { client: {}, workdir: () => undefined, workdirs: [], rootOf: () => 0 }
const headings = new Set(
  tools
    .split("\n")
    .filter((l) => l.startsWith("## "))
    .map((l) => l.slice(3).trim())
)
for (const tool of [
  ...mcp.readTools({}, settings),
  ...mcp.mutationTools({}),
  ...mcp.agentTools(agentContext),
  mcp.serverInfoTool(() => undefined)
]) {
  if (!headings.has(tool.name)) problems.push(`docs/tools.md: no section for ${tool.name}`)
}

if (problems.length > 0) {
  for (const p of problems) console.error(`docs check: ${p}`)
  process.exit(1)
}
if (mode === "--check") console.log("docs check: configuration, error codes and tools are documented")
