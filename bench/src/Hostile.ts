import * as fs from "node:fs"
import * as path from "node:path"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { McpSession, type ServerLaunch } from "./McpDriver.js"
import type { Row } from "./Report.js"
import { serverfsEntry } from "./Servers.js"
import { type Summary, summarize } from "./Stats.js"

/**
 * The hostile rows (issue 14's reproductions): each attack is one call a prompt-injected model
 * could make. For each, two rows side by side in one run:
 *
 * - the hostile call's duration against an ordinary call of the same tool on the same tree
 *   (the bound decides how long it runs, not the attacker);
 * - how long `list_workdirs`, asked while the hostile call runs, waits for its answer, against
 *   the same call on an idle server (a server that blocks its event loop for the attack makes
 *   every other client wait as long as the attack).
 *
 * A call that does not come back (the server died, or 120 s passed) is reported as n/a with a
 * note, so the same bench runs against a build without the bounds.
 */
export interface HostilePlan {
  readonly iterations: number
}

const MIB = 1024 * 1024
const LONG_NAME = "quarterly-financial-report-2024-final-version.txt"

interface Attack {
  readonly name: string
  readonly hostile: (session: McpSession, revision: string) => Promise<CallToolResult>
  readonly ordinary: (session: McpSession) => Promise<CallToolResult>
}

const ATTACKS: ReadonlyArray<Attack> = [
  {
    name: "find_files *?×12 Z (backtracking pattern)",
    hostile: (s) =>
      s.attempt("find_files", { workdir: "ro", path: "names", pattern: "*?*?*?*?*?*?*?*?*?*?*?*?Z" }),
    ordinary: (s) => s.attempt("find_files", { workdir: "ro", path: "names", pattern: "*.txt" })
  },
  {
    name: "edit_text_file growing 1 MB to 200 MB",
    hostile: (s, expected_revision) =>
      s.attempt("edit_text_file", {
        workdir: "rw",
        path: "big.txt",
        expected_revision,
        edits: [
          { old_text: "a", new_text: "b".repeat(200), expected_count: 1_000_000 },
          { old_text: "b", new_text: "b", expected_count: 200_000_000 }
        ]
      }),
    ordinary: (s) => s.attempt("stat_file", { workdir: "rw", path: "big.txt" })
  },
  {
    name: "edit_text_file old_text a×250k b a×250k",
    hostile: (s, expected_revision) =>
      s.attempt("edit_text_file", {
        workdir: "rw",
        path: "big.txt",
        expected_revision,
        edits: [
          { old_text: `${"a".repeat(250_000)}b${"a".repeat(249_999)}`, new_text: "", expected_count: 1 }
        ]
      }),
    ordinary: (s) => s.attempt("stat_file", { workdir: "rw", path: "big.txt" })
  },
  {
    name: "read_text_file line 10^6 of a 50 GB sparse file",
    hostile: (s) =>
      s.attempt("read_text_file", { workdir: "ro", path: "logs/sparse.log", start_line: 1_000_000 }),
    ordinary: (s) => s.attempt("read_text_file", { workdir: "ro", path: "logs/sparse.log", max_lines: 40 })
  },
  {
    name: "search_text over six 1 MiB lines",
    hostile: (s) => s.attempt("search_text", { workdir: "ro", path: "minified", query: "needle" }),
    ordinary: (s) => s.attempt("search_text", { workdir: "ro", path: "names", query: "quarterly" })
  },
  {
    name: "search_text matching a 20 MB line",
    hostile: (s) => s.attempt("search_text", { workdir: "ro", path: "long-line", query: "needle" }),
    ordinary: (s) => s.attempt("search_text", { workdir: "ro", path: "names", query: "quarterly" })
  },
  {
    name: "list_directory of 200,000 entries",
    hostile: (s) => s.attempt("list_directory", { workdir: "ro", path: "many", limit: 100 }),
    ordinary: (s) => s.attempt("list_directory", { workdir: "ro", path: "names", limit: 100 })
  }
]

/** The attack tree, made once under `root` and reused while its marker is there. */
const prepare = (root: string, log: (m: string) => void): { ro: string; rw: string } => {
  const ro = path.join(root, "ro")
  const rw = path.join(root, "rw")
  const marker = path.join(root, ".complete")
  if (!fs.existsSync(marker)) {
    log(`hostile tree: ${root}`)
    fs.rmSync(root, { recursive: true, force: true })
    const file = (relative: string, content: string) => {
      fs.mkdirSync(path.dirname(path.join(ro, relative)), { recursive: true })
      fs.writeFileSync(path.join(ro, relative), content)
    }
    file(`names/${LONG_NAME}`, "quarterly numbers\n")
    for (let i = 0; i < 1000; i++) file(`names/file-${i}.txt`, `line ${i}\n`)
    file("logs/sparse.log", "a line of an ordinary log file, forty-ish\n".repeat(40))
    fs.truncateSync(path.join(ro, "logs/sparse.log"), 50 * 1024 ** 3)
    for (let i = 1; i <= 6; i++) file(`minified/bundle-${i}.js`, `${"x".repeat(MIB - 16)}needle${i}\n`)
    file("long-line/twenty.txt", `needle${"y".repeat(20 * MIB)}\n`)
    fs.mkdirSync(path.join(ro, "many"))
    for (let i = 0; i < 200_000; i++) fs.closeSync(fs.openSync(path.join(ro, "many", `entry-${i}`), "w"))
    fs.mkdirSync(rw)
    fs.writeFileSync(marker, "")
  }
  // Reset on every run: an edit that succeeded on an unbounded build changed it.
  fs.writeFileSync(path.join(rw, "big.txt"), "a".repeat(1_000_000))
  return { ro, rw }
}

const launch = (ro: string, rw: string): ServerLaunch => ({
  label: "ServerFS",
  command: process.execPath,
  args: [serverfsEntry()],
  env: {
    WORKDIR_01_ALIAS: "ro",
    WORKDIR_01_PATH: ro,
    WORKDIR_02_ALIAS: "rw",
    WORKDIR_02_PATH: rw,
    WORKDIR_02_READ_ONLY: "false",
    SERVERFS_LOG_LEVEL: "ERROR"
  }
})

const timed = async (run: () => Promise<unknown>): Promise<number> => {
  const started = performance.now()
  await run()
  return performance.now() - started
}

const codeOf = (result: CallToolResult): string => {
  if (result.isError !== true) return "ok"
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join(" ")
  return /\b([A-Z][A-Z0-9_]+):/.exec(text)?.[1] ?? "error"
}

export const runHostile = async (
  root: string,
  plan: HostilePlan,
  log: (m: string) => void
): Promise<{ rows: Row[]; notes: string[] }> => {
  const { ro, rw } = prepare(root, log)
  const rows: Row[] = []
  const notes: string[] = []
  let session = await McpSession.start(launch(ro, rw))
  const restart = async () => {
    await session.close().catch(() => undefined)
    session = await McpSession.start(launch(ro, rw))
  }
  try {
    for (const attack of ATTACKS) {
      log(`hostile: ${attack.name}`)
      const hostile: number[] = []
      const ordinary: number[] = []
      const underAttack: number[] = []
      const idle: number[] = []
      const codes = new Set<string>()
      for (let i = 0; i < plan.iterations; i++) {
        idle.push(await timed(() => session.attempt("list_workdirs", {})))
        ordinary.push(await timed(() => attack.ordinary(session)))
        const stat = await session.attempt("stat_file", { workdir: "rw", path: "big.txt" })
        const revision = String((stat.structuredContent as { revision?: unknown } | undefined)?.revision)
        const started = performance.now()
        const call = attack.hostile(session, revision).then(
          (result) => {
            codes.add(codeOf(result))
            hostile.push(performance.now() - started)
          },
          (error: unknown) => {
            codes.add(`no answer (${error instanceof Error ? error.message.slice(0, 80) : "?"})`)
          }
        )
        // Asked just after the hostile call, while it runs.
        await new Promise((resolve) => setTimeout(resolve, 20))
        const bystander = await timed(() => session.attempt("list_workdirs", {})).catch(() => Number.NaN)
        if (Number.isFinite(bystander)) underAttack.push(bystander)
        await call
        if (hostile.length < i + 1) {
          await restart()
          break
        }
      }
      notes.push(`hostile ${attack.name}: answered ${[...codes].join(", ")}`)
      const summaryOf = (samples: number[]): Summary => summarize(samples)
      rows.push(
        {
          operation: `hostile: ${attack.name}`,
          unit: "ms",
          serverfs: summaryOf(hostile),
          baselines: [{ label: "the same tool, ordinary call", summary: summaryOf(ordinary) }]
        },
        {
          operation: `  list_workdirs during it`,
          unit: "ms",
          serverfs: summaryOf(underAttack),
          baselines: [{ label: "list_workdirs, idle server", summary: summaryOf(idle) }],
          limits: [{ stat: "p99", atMost: 250 }]
        }
      )
    }
  } finally {
    await session.close().catch(() => undefined)
  }
  return { rows, notes }
}
