/**
 * MIME types guessed from names: source and configuration files are text, never `video/mp2t`
 * (the `mime-types` table's answer for `.ts`) nor octet-stream. The expected column is the
 * documented table (docs/tools.md, stat_file), written out here rather than read from the code.
 */
import { describe, expect, it } from "@effect/vitest"
import { mimeTypeOf } from "../src/index.js"

const table: ReadonlyArray<readonly [string, string]> = [
  ["index.ts", "text/x-typescript"],
  ["App.tsx", "text/x-typescript"],
  ["mod.mts", "text/x-typescript"],
  ["mod.cts", "text/x-typescript"],
  ["types.d.ts", "text/x-typescript"],
  ["UPPER.TS", "text/x-typescript"],
  ["main.js", "text/javascript"],
  ["mod.mjs", "text/javascript"],
  ["mod.cjs", "text/javascript"],
  ["lib.rs", "text/x-rust"],
  ["main.go", "text/x-go"],
  ["app.py", "text/x-python"],
  ["stub.pyi", "text/x-python"],
  ["run.sh", "text/x-shellscript"],
  ["run.bash", "text/x-shellscript"],
  ["Cargo.toml", "text/x-toml"],
  ["ci.yaml", "text/yaml"],
  ["ci.yml", "text/yaml"],
  ["README.md", "text/markdown"],
  ["package.json", "application/json"],
  ["Main.java", "text/x-java-source"],
  ["main.c", "text/x-c"],
  ["main.hpp", "text/x-c"],
  ["app.rb", "text/x-ruby"],
  ["Main.kt", "text/x-kotlin"],
  ["query.sql", "text/x-sql"],
  ["fix.diff", "text/x-diff"],
  ["fix.patch", "text/x-diff"],
  ["style.css", "text/css"],
  ["notes.txt", "text/plain"],
  // media and unknown names keep the `mime-types` answer
  ["image.png", "image/png"],
  ["clip.mp4", "video/mp4"],
  ["data.unknownext", "application/octet-stream"],
  // no extension: the name itself is never taken for one
  ["Makefile", "application/octet-stream"],
  ["ts", "application/octet-stream"],
  ["md", "application/octet-stream"],
  [".ts", "application/octet-stream"],
  [".profile", "application/octet-stream"],
  ["trailing.", "application/octet-stream"],
  // inherited object keys are not extensions
  ["x.constructor", "application/octet-stream"],
  ["x.__proto__", "application/octet-stream"]
]

describe("mimeTypeOf: source files are text", () => {
  for (const [name, expected] of table) {
    it(`${JSON.stringify(name)} → ${expected}`, () => {
      expect(mimeTypeOf(name)).toBe(expected)
    })
  }
  it("no source extension maps to video/* or octet-stream", () => {
    for (const [name, type] of table.slice(0, 30)) {
      expect(type.startsWith("text/") || type === "application/json", name).toBe(true)
    }
  })
})
