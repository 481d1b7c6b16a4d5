import * as fs from "node:fs"
import * as path from "node:path"
import { Schema } from "effect"

/**
 * The layering rules of the project's ARCHITECTURE.md as a function over the workspace's package graph,
 * so a test can fail on a forbidden edge instead of a reviewer having to notice it. An edge is
 * either a declared production dependency (package.json `dependencies`) or an actual import in a
 * `src/` file: `@serverfs/<pkg>` specifiers, relative specifiers that climb out of their package
 * into another one, and `node:` modules (for the pure packages).
 *
 * Rules (ARCHITECTURE.md "Processes", "Repository layout"):
 * - apps/mcp never reaches @serverfs/store, @serverfs/adapters or the bridge, not even through
 *   another package: the MCP process never opens SQLite nor spawns a provider.
 * - apps/cli depends on the RPC client, the policy and the domain only.
 * - libs/domain is pure: no other @serverfs package, and of Node's modules only what computes
 *   without touching the outside world — path arithmetic (`node:path/posix`) and hashing
 *   (`node:crypto`). No fs, net, child_process, os, process state.
 * - libs/posix sits below everything: it imports no @serverfs package.
 * - no library reaches an app; @serverfs/testkit is for tests only (never a production
 *   dependency nor imported by a `src/` file outside the testkit itself).
 * - the package graph has no cycle.
 */

export interface ImportEdge {
  /** The file, relative to the repository root. */
  readonly file: string
  /** The specifier as written. */
  readonly specifier: string
  /** The package it reaches (`@serverfs/x`), or the `node:` module. */
  readonly target: string
}

export interface PackageNode {
  readonly name: string
  /** The package directory, relative to the repository root (`apps/mcp`). */
  readonly dir: string
  /** Declared production dependencies (`dependencies`, not `devDependencies`). */
  readonly dependencies: ReadonlyArray<string>
  readonly imports: ReadonlyArray<ImportEdge>
}

export interface Violation {
  readonly rule: string
  readonly from: string
  readonly to: string
  /** The file or package.json that holds the edge, or the cycle's path. */
  readonly where: string
}

const OURS = "@serverfs/"

/** What libs/domain may import from Node: pure computation only. */
export const DOMAIN_ALLOWED_NODE_MODULES: ReadonlyArray<string> = ["node:path/posix", "node:crypto"]

const MCP_UNREACHABLE = ["@serverfs/store", "@serverfs/adapters", "@serverfs/bridge"]
const CLI_ALLOWED = ["@serverfs/rpc", "@serverfs/policy", "@serverfs/domain"]
const APPS = ["@serverfs/mcp", "@serverfs/bridge", "@serverfs/cli"]
const TESTKIT = "@serverfs/testkit"

interface Edge {
  readonly to: string
  readonly where: string
}

/** Every edge of a package: its declared dependencies and its imports. */
const edgesOf = (node: PackageNode): ReadonlyArray<Edge> => [
  ...node.dependencies
    .filter((d) => d.startsWith(OURS))
    .map((to) => ({ to, where: `${node.dir}/package.json` })),
  ...node.imports.map((i) => ({ to: i.target, where: `${i.file} (${i.specifier})` }))
]

const internalGraph = (nodes: ReadonlyArray<PackageNode>): ReadonlyMap<string, ReadonlySet<string>> =>
  new Map(
    nodes.map((n) => [
      n.name,
      new Set(
        edgesOf(n)
          .map((e) => e.to)
          .filter((to) => to.startsWith(OURS) && to !== n.name)
      )
    ])
  )

/** The packages reachable from `start`, each with the path that reaches it. */
const reachable = (
  graph: ReadonlyMap<string, ReadonlySet<string>>,
  start: string
): ReadonlyMap<string, ReadonlyArray<string>> => {
  const seen = new Map<string, ReadonlyArray<string>>()
  const queue: Array<ReadonlyArray<string>> = [[start]]
  while (queue.length > 0) {
    const trail = queue.shift()!
    for (const next of graph.get(trail[trail.length - 1]!) ?? []) {
      if (seen.has(next)) continue
      seen.set(next, [...trail, next])
      queue.push([...trail, next])
    }
  }
  return seen
}

/** Each cycle once, as the path that closes it (depth-first search with an on-stack set). */
const cycles = (graph: ReadonlyMap<string, ReadonlySet<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  const found: Array<ReadonlyArray<string>> = []
  const done = new Set<string>()
  const visit = (name: string, stack: ReadonlyArray<string>): void => {
    const at = stack.indexOf(name)
    if (at >= 0) {
      found.push([...stack.slice(at), name])
      return
    }
    if (done.has(name)) return
    for (const next of graph.get(name) ?? []) visit(next, [...stack, name])
    done.add(name)
  }
  for (const name of graph.keys()) visit(name, [])
  return found
}

export const checkArchitecture = (nodes: ReadonlyArray<PackageNode>): ReadonlyArray<Violation> => {
  const violations: Array<Violation> = []
  const graph = internalGraph(nodes)
  for (const node of nodes) {
    const edges = edgesOf(node)
    const ours = edges.filter((e) => e.to.startsWith(OURS) && e.to !== node.name)
    const flag = (rule: string, list: ReadonlyArray<Edge>) => {
      for (const e of list) violations.push({ rule, from: node.name, to: e.to, where: e.where })
    }

    if (node.name === "@serverfs/mcp") {
      for (const [target, trail] of reachable(graph, node.name))
        if (MCP_UNREACHABLE.includes(target))
          violations.push({
            rule: "apps/mcp must not reach the store, the adapters or the bridge",
            from: node.name,
            to: target,
            where: trail.join(" → ")
          })
    }
    if (node.name === "@serverfs/cli")
      flag(
        "apps/cli depends only on the RPC client, the policy and the domain",
        ours.filter((e) => !CLI_ALLOWED.includes(e.to))
      )
    if (node.name === "@serverfs/domain") {
      flag("libs/domain imports no other ServerFS package", ours)
      flag(
        `libs/domain is pure: of Node it may import only ${DOMAIN_ALLOWED_NODE_MODULES.join(", ")}`,
        edges.filter((e) => e.to.startsWith("node:") && !DOMAIN_ALLOWED_NODE_MODULES.includes(e.to))
      )
    }
    if (node.name === "@serverfs/posix") flag("libs/posix imports no other ServerFS package", ours)
    if (node.dir.startsWith("libs/"))
      flag(
        "a library never reaches an app",
        ours.filter((e) => APPS.includes(e.to))
      )
    if (node.name !== TESTKIT)
      flag(
        "@serverfs/testkit is for tests only",
        ours.filter((e) => e.to === TESTKIT)
      )
  }
  for (const cycle of cycles(graph))
    violations.push({
      rule: "the package graph has no cycle",
      from: cycle[0]!,
      to: cycle[1]!,
      where: cycle.join(" → ")
    })
  return violations
}

// ---------------------------------------------------------------------------------------------
// Reading the real workspace.

const SPECIFIER =
  /(?:\bimport\s+(?:type\s+)?(?:[^"';]*?\sfrom\s*)?|\bexport\s+(?:type\s+)?[^"';]*?\sfrom\s*|\bimport\s*\(\s*)["']([^"']+)["']/g

/** Import specifiers of one source text, comments removed first (a commented import is no edge). */
export const importSpecifiers = (text: string): ReadonlyArray<string> => {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("//"))
    .join("\n")
  return [...code.matchAll(SPECIFIER)].map((m) => m[1]!)
}

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((f) => /\.(ts|tsx|mts)$/.test(f) && !f.endsWith(".d.ts"))
        .map((f) => path.join(dir, f))
    : []

/** The package a specifier reaches, if it reaches one of ours or a Node module. */
const targetOf = (
  repoRoot: string,
  file: string,
  specifier: string,
  byDir: ReadonlyArray<{ readonly dir: string; readonly name: string }>
): string | undefined => {
  if (specifier.startsWith(OURS)) return specifier.split("/").slice(0, 2).join("/")
  if (specifier.startsWith("node:")) return specifier
  if (!specifier.startsWith(".")) return undefined
  const resolved = path.relative(repoRoot, path.resolve(path.dirname(file), specifier))
  return byDir.find((p) => resolved === p.dir || resolved.startsWith(`${p.dir}/`))?.name
}

const decodeManifest = Schema.decodeUnknownSync(
  Schema.parseJson(
    Schema.Struct({
      name: Schema.String,
      dependencies: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
    })
  )
)

/** Every workspace package under libs/ and apps/, with its dependencies and its src/ imports. */
export const loadWorkspaceGraph = (repoRoot: string): ReadonlyArray<PackageNode> => {
  const dirs = ["libs", "apps"].flatMap((top) =>
    fs
      .readdirSync(path.join(repoRoot, top))
      .map((d) => `${top}/${d}`)
      .filter((d) => fs.existsSync(path.join(repoRoot, d, "package.json")))
  )
  const manifests = dirs.map((dir) => {
    const json = decodeManifest(fs.readFileSync(path.join(repoRoot, dir, "package.json"), "utf8"))
    return { dir, name: json.name, dependencies: Object.keys(json.dependencies ?? {}) }
  })
  return manifests.map(({ dir, name, dependencies }) => ({
    name,
    dir,
    dependencies,
    imports: sourceFiles(path.join(repoRoot, dir, "src")).flatMap((file) =>
      importSpecifiers(fs.readFileSync(file, "utf8")).flatMap((specifier) => {
        const target = targetOf(repoRoot, file, specifier, manifests)
        return target === undefined || target === name
          ? []
          : [{ file: path.relative(repoRoot, file), specifier, target }]
      })
    )
  }))
}
