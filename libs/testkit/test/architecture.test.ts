import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  checkArchitecture,
  importSpecifiers,
  loadWorkspaceGraph,
  type PackageNode
} from "../src/ArchitectureRules.js"
import { repoRoot } from "../src/RepoPaths.js"
import { scopedTempTree } from "../src/TempTree.js"

/** The house's layering rules (ARCHITECTURE.md) checked on the real workspace, and the checker checked. */

const node = (
  name: string,
  dir: string,
  imports: ReadonlyArray<string> = [],
  dependencies: ReadonlyArray<string> = []
): PackageNode => ({
  name,
  dir,
  dependencies,
  imports: imports.map((target) => ({ file: `${dir}/src/index.ts`, specifier: target, target }))
})

/** A small graph that obeys every rule; each planted edge below breaks exactly one. */
const lawful: ReadonlyArray<PackageNode> = [
  node("@serverfs/domain", "libs/domain", ["node:crypto", "node:path/posix"]),
  node("@serverfs/posix", "libs/posix"),
  node("@serverfs/policy", "libs/policy", ["@serverfs/domain"]),
  node("@serverfs/workspace", "libs/workspace", ["@serverfs/policy", "@serverfs/posix"]),
  node("@serverfs/rpc", "libs/rpc", ["@serverfs/domain", "@serverfs/posix"]),
  node("@serverfs/store", "libs/store", ["@serverfs/domain"]),
  node("@serverfs/adapters", "libs/adapters", ["@serverfs/domain"]),
  node("@serverfs/testkit", "libs/testkit", ["@serverfs/domain"]),
  node("@serverfs/mcp", "apps/mcp", ["@serverfs/workspace", "@serverfs/rpc"]),
  node("@serverfs/bridge", "apps/bridge", ["@serverfs/store", "@serverfs/adapters", "@serverfs/rpc"]),
  node("@serverfs/cli", "apps/cli", ["@serverfs/rpc", "@serverfs/policy"])
]

const plant = (name: string, target: string): ReadonlyArray<PackageNode> =>
  lawful.map((n) =>
    n.name === name
      ? { ...n, imports: [...n.imports, { file: `${n.dir}/src/Planted.ts`, specifier: target, target }] }
      : n
  )

describe("the architecture checker", () => {
  it("passes a graph that obeys every rule (so a failure below is the planted edge)", () => {
    expect(checkArchitecture(lawful)).toEqual([])
  })

  it.each([
    ["@serverfs/mcp", "@serverfs/store", "apps/mcp must not reach"],
    ["@serverfs/mcp", "@serverfs/bridge", "apps/mcp must not reach"],
    ["@serverfs/cli", "@serverfs/store", "apps/cli depends only"],
    ["@serverfs/cli", "@serverfs/workspace", "apps/cli depends only"],
    ["@serverfs/domain", "@serverfs/policy", "libs/domain imports no other"],
    ["@serverfs/domain", "node:fs", "libs/domain is pure"],
    ["@serverfs/domain", "node:child_process", "libs/domain is pure"],
    ["@serverfs/posix", "@serverfs/domain", "libs/posix imports no other"],
    ["@serverfs/store", "@serverfs/bridge", "a library never reaches an app"],
    ["@serverfs/workspace", "@serverfs/testkit", "@serverfs/testkit is for tests only"]
  ])("%s importing %s → a violation (%s)", (from, to, rule) => {
    const violations = checkArchitecture(plant(from, to))
    expect(violations.length).toBeGreaterThan(0)
    expect(violations.some((v) => v.rule.startsWith(rule) && v.to === to)).toBe(true)
  })

  it("apps/mcp reaching the store through another package is a violation, with the path named", () => {
    const violations = checkArchitecture(plant("@serverfs/workspace", "@serverfs/store"))
    expect(violations).toContainEqual(
      expect.objectContaining({
        to: "@serverfs/store",
        where: "@serverfs/mcp → @serverfs/workspace → @serverfs/store"
      })
    )
  })

  it("a cycle among packages is a violation", () => {
    // workspace → policy already exists; policy → workspace closes the loop.
    const violations = checkArchitecture(plant("@serverfs/policy", "@serverfs/workspace"))
    expect(violations.some((v) => v.rule === "the package graph has no cycle")).toBe(true)
  })

  it("a declared production dependency counts like an import", () => {
    const graph = lawful.map((n) =>
      n.name === "@serverfs/cli" ? { ...n, dependencies: ["@serverfs/store"] } : n
    )
    expect(checkArchitecture(graph)).toContainEqual(
      expect.objectContaining({
        from: "@serverfs/cli",
        to: "@serverfs/store",
        where: "apps/cli/package.json"
      })
    )
  })

  it("reads static, type-only, re-exported, side-effect and dynamic imports, but not commented ones", () => {
    const text = [
      'import { A } from "@serverfs/a"',
      'import type { B } from "@serverfs/b"',
      'export { C } from "@serverfs/c"',
      'export * from "./local.js"',
      'import "@serverfs/d"',
      'const e = await import("@serverfs/e")',
      "import {\n  F,\n  G\n} from '@serverfs/f'",
      '// import { H } from "@serverfs/h"',
      '/* import { I } from "@serverfs/i" */'
    ].join("\n")
    expect(importSpecifiers(text)).toEqual([
      "@serverfs/a",
      "@serverfs/b",
      "@serverfs/c",
      "./local.js",
      "@serverfs/d",
      "@serverfs/e",
      "@serverfs/f"
    ])
  })

  it.scoped(
    "a planted forbidden import in a real file tree is found (relative paths that leave the package too)",
    () =>
      Effect.gen(function* () {
        const { base: root } = yield* scopedTempTree("serverfs-arch-")
        const pkg = (dir: string, name: string, files: Record<string, string>) => {
          fs.mkdirSync(path.join(root, dir, "src"), { recursive: true })
          fs.writeFileSync(path.join(root, dir, "package.json"), JSON.stringify({ name, dependencies: {} }))
          for (const [file, text] of Object.entries(files))
            fs.writeFileSync(path.join(root, dir, "src", file), text)
        }
        pkg("libs/store", "@serverfs/store", { "index.ts": "export const store = 1\n" })
        pkg("libs/domain", "@serverfs/domain", { "index.ts": 'import * as fs from "node:fs"\n' })
        pkg("apps/mcp", "@serverfs/mcp", {
          "main.ts": 'import { store } from "../../../libs/store/src/index.js"\n'
        })
        const violations = checkArchitecture(loadWorkspaceGraph(root))
        expect(violations).toContainEqual(
          expect.objectContaining({
            from: "@serverfs/mcp",
            to: "@serverfs/store",
            where: "@serverfs/mcp → @serverfs/store"
          })
        )
        expect(violations).toContainEqual(
          expect.objectContaining({ from: "@serverfs/domain", to: "node:fs" })
        )
      })
  )
})

describe("the workspace", () => {
  it("obeys the layering rules of ARCHITECTURE.md (imports and package.json dependencies)", () => {
    const graph = loadWorkspaceGraph(repoRoot)
    // The checker saw the real packages, not an empty directory.
    expect(graph.map((n) => n.name)).toEqual(
      expect.arrayContaining(["@serverfs/domain", "@serverfs/mcp", "@serverfs/bridge", "@serverfs/cli"])
    )
    expect(graph.find((n) => n.name === "@serverfs/mcp")?.imports.length).toBeGreaterThan(0)
    expect(checkArchitecture(graph)).toEqual([])
  })
})
