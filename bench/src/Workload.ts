import * as path from "node:path"
import type { McpSession } from "./McpDriver.js"
import { type Contender, measure } from "./Measure.js"
import { rawList, rawReadText, rawStat } from "./RawFs.js"
import { rgFiles, rgJson } from "./RawRipgrep.js"
import type { Row } from "./Report.js"
import type { Tree } from "./TreeGenerator.js"

/** Iterations per kind of operation (`--quick` divides them). */
export interface Plan {
  /** read_text_file, stat_file, list_directory: sub-millisecond calls. */
  readonly fastWarmup: number
  readonly fastIterations: number
  /** Early-stopped search and name search: tens of milliseconds. */
  readonly searchWarmup: number
  readonly searchIterations: number
  /** Full scans. */
  readonly scanIterations: number
  /** server-filesystem's search_files: seconds per call. */
  readonly slowIterations: number
}

/** Short names for `--only`. */
export const OPERATION_KEYS = [
  "floor",
  "search",
  "scan",
  "find",
  "read",
  "stat",
  "list",
  "cold",
  "rss"
] as const
export type OperationKey = (typeof OPERATION_KEYS)[number]

const WORKDIR = "bench"
const SEARCH_LIMIT = 100

const at = <T>(items: ReadonlyArray<T>, i: number): T => items[i % items.length]!

/**
 * The side-by-side comparisons, each on the same tree and the same inputs for every contender,
 * with both servers alive at once over the same kind of stdio transport.
 */
export const runWorkload = async (
  tree: Tree,
  serverfs: McpSession,
  reference: McpSession,
  plan: Plan,
  progress: (message: string) => void,
  only: (key: OperationKey) => boolean = () => true
): Promise<Row[]> => {
  const root = tree.root
  const abs = (relative: string) => path.join(root, relative)
  const fast = { warmup: plan.fastWarmup, iterations: plan.fastIterations }
  const rows: Row[] = []

  const compare = async (
    key: OperationKey,
    operation: string,
    contenders: ReadonlyArray<Contender>,
    options: { warmup: number; iterations: number },
    target?: Row["target"]
  ) => {
    if (!only(key)) return
    progress(`${operation} (${options.iterations} rounds)`)
    const results = await measure(contenders, options)
    const [own, ...others] = contenders
    rows.push({
      operation,
      unit: "ms",
      serverfs: results.get(own!.label)!,
      baselines: others.map((c) => ({ label: c.label, summary: results.get(c.label)! })),
      ...(target === undefined ? {} : { target })
    })
  }

  await compare(
    "floor",
    "MCP ping (no tool code: transport + SDK floor)",
    [
      { label: "ServerFS", run: () => serverfs.ping() },
      { label: "server-filesystem ping", run: () => reference.ping() }
    ],
    fast
  )

  await compare(
    "floor",
    "trivial tool: list_workdirs",
    [
      { label: "ServerFS", run: () => serverfs.call("list_workdirs", {}) },
      {
        label: "server-filesystem list_allowed_directories",
        run: () => reference.call("list_allowed_directories", {})
      }
    ],
    fast
  )

  await compare(
    "search",
    `search_text, limit ${SEARCH_LIMIT} (${tree.spec.rareCount} matches exist)`,
    [
      {
        label: "ServerFS",
        run: () =>
          serverfs.call("search_text", {
            workdir: WORKDIR,
            query: tree.rareToken,
            case_sensitive: true,
            limit: SEARCH_LIMIT
          })
      },
      {
        label: `rg --json, killed at match ${SEARCH_LIMIT}`,
        run: () => rgJson(root, tree.rareToken, SEARCH_LIMIT)
      }
    ],
    { warmup: plan.searchWarmup, iterations: plan.searchIterations },
    { against: `rg --json, killed at match ${SEARCH_LIMIT}`, maxRatio: 1.5 }
  )

  await compare(
    "scan",
    "search_text, full scan (no match)",
    [
      {
        label: "ServerFS",
        run: () =>
          serverfs.call("search_text", {
            workdir: WORKDIR,
            query: tree.absentQuery,
            case_sensitive: true,
            limit: SEARCH_LIMIT
          })
      },
      { label: "rg --json (full scan)", run: () => rgJson(root, tree.absentQuery) }
    ],
    { warmup: 2, iterations: plan.scanIterations },
    { against: "rg --json (full scan)", maxRatio: 1.15 }
  )

  await compare(
    "find",
    `find_files ${tree.findPattern} (${tree.spec.findCount} matches, full walk)`,
    [
      {
        label: "ServerFS",
        run: () =>
          serverfs.call("find_files", { workdir: WORKDIR, pattern: tree.findPattern, limit: SEARCH_LIMIT })
      },
      { label: `rg --files -g '${tree.findPattern}'`, run: () => rgFiles(root, tree.findPattern) },
      {
        label: `server-filesystem search_files **/${tree.findPattern}`,
        run: () => reference.call("search_files", { path: root, pattern: `**/${tree.findPattern}` }),
        iterations: plan.slowIterations
      }
    ],
    { warmup: 1, iterations: plan.scanIterations },
    { against: `rg --files -g '${tree.findPattern}'`, maxRatio: 3 }
  )

  await compare(
    "read",
    `read_text_file (${tree.readTargets.length} files of 1–16 KiB, whole file)`,
    [
      {
        label: "ServerFS",
        run: (i) =>
          serverfs.call("read_text_file", { workdir: WORKDIR, path: at(tree.readTargets, i), max_lines: 500 })
      },
      {
        label: "server-filesystem read_text_file",
        run: (i) => reference.call("read_text_file", { path: abs(at(tree.readTargets, i)) })
      },
      { label: "fs.readFileSync", run: async (i) => rawReadText(root, at(tree.readTargets, i)) }
    ],
    fast,
    { against: "server-filesystem read_text_file", maxRatio: 1, goal: 0.5 }
  )

  await compare(
    "stat",
    `stat_file (${tree.statTargets.length} files)`,
    [
      {
        label: "ServerFS",
        run: (i) => serverfs.call("stat_file", { workdir: WORKDIR, path: at(tree.statTargets, i) })
      },
      {
        label: "server-filesystem get_file_info",
        run: (i) => reference.call("get_file_info", { path: abs(at(tree.statTargets, i)) })
      },
      { label: "fs.statSync", run: async (i) => rawStat(root, at(tree.statTargets, i)) }
    ],
    fast,
    { against: "server-filesystem get_file_info", maxRatio: 1, goal: 0.5 }
  )

  await compare(
    "list",
    `list_directory (${tree.listTargets.length} dirs of 30–100 entries)`,
    [
      {
        label: "ServerFS",
        run: (i) =>
          serverfs.call("list_directory", { workdir: WORKDIR, path: at(tree.listTargets, i), limit: 500 })
      },
      {
        label: "server-filesystem list_directory",
        run: (i) => reference.call("list_directory", { path: abs(at(tree.listTargets, i)) })
      },
      {
        label: "server-filesystem list_directory_with_sizes",
        run: (i) => reference.call("list_directory_with_sizes", { path: abs(at(tree.listTargets, i)) })
      },
      { label: "readdirSync + lstatSync", run: async (i) => rawList(root, at(tree.listTargets, i)) }
    ],
    fast,
    { against: "server-filesystem list_directory", maxRatio: 1, goal: 0.8 }
  )

  return rows
}
