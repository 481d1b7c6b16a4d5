#!/usr/bin/env node
/**
 * Regenerates ./generated from the pinned Codex CLI and records its version:
 *
 *   node libs/adapters/src/codex/protocol/generate.mjs
 *
 * 1. `codex app-server generate-ts --experimental` (the pinned @openai/codex in node_modules),
 *    run with a throwaway CODEX_HOME so no user configuration influences the output;
 * 2. the generated relative imports get their `.js` suffix (NodeNext ESM needs it; the
 *    generator emits extensionless specifiers) — the only rewrite, done mechanically;
 * 3. ./Version.ts records the CLI version the types came from.
 *
 * A Codex upgrade is: bump @openai/codex, run this, run tsc — a changed protocol shows up as
 * type errors in the adapter.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, "../../../../..")
const codex = path.join(repo, "node_modules/.bin/codex")
const out = path.join(here, "generated")
const home = fs.mkdtempSync(path.join(os.tmpdir(), "codex-generate-"))

try {
  const env = { ...process.env, CODEX_HOME: home }
  const version = execFileSync(codex, ["--version"], { env, encoding: "utf8" })
    .trim()
    .replace(/^codex-cli\s+/, "")
  fs.rmSync(out, { recursive: true, force: true })
  execFileSync(codex, ["app-server", "generate-ts", "--out", out, "--experimental"], {
    env,
    stdio: "inherit"
  })

  const specifier = /(from\s+")(\.{1,2}\/[^"]+?)(")/g
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (entry.name.endsWith(".ts")) {
        const text = fs.readFileSync(file, "utf8")
        const fixed = text.replace(specifier, (_m, a, spec, c) => {
          if (spec.endsWith(".js")) return `${a}${spec}${c}`
          const isDir = fs.existsSync(path.join(dir, spec)) && fs.statSync(path.join(dir, spec)).isDirectory()
          return `${a}${spec}${isDir ? "/index.js" : ".js"}${c}`
        })
        if (fixed !== text) fs.writeFileSync(file, fixed)
      }
    }
  }
  walk(out)

  fs.writeFileSync(
    path.join(here, "Version.ts"),
    `/** The Codex CLI version ./generated was produced from (by ./generate.mjs). */\nexport const CODEX_PROTOCOL_VERSION = "${version}"\n`
  )
  console.log(`generated the Codex ${version} app-server protocol types in ${path.relative(repo, out)}`)
} finally {
  fs.rmSync(home, { recursive: true, force: true })
}
