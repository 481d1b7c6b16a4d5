#!/usr/bin/env node
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { rgPath } from "@vscode/ripgrep"
import { coldStart } from "./ColdStart.js"
import { McpSession } from "./McpDriver.js"
import { type Row, renderMarkdown, renderText, verdictOf } from "./Report.js"
import { memoryOf } from "./Rss.js"
import { sanityCheck } from "./Sanity.js"
import {
  serverFilesystemEntry,
  serverFilesystemLaunch,
  serverFilesystemVersion,
  serverfsEntry,
  serverfsLaunch
} from "./Servers.js"
import { single } from "./Stats.js"
import { generateTree } from "./TreeGenerator.js"
import { OPERATION_KEYS, type OperationKey, type Plan, runWorkload } from "./Workload.js"

/**
 * The benchmark: serverfs-mcp against raw calls, raw ripgrep and
 * @modelcontextprotocol/server-filesystem, side by side on one generated tree.
 *
 *   node bench/dist/main.js [--files 24000] [--seed 1] [--dir PATH] [--quick]
 *                           [--cold-runs 9] [--only floor,search,scan,find,read,stat,list,cold,rss]
 *                           [--markdown FILE] [--json FILE]
 *
 * It prints a table of p50/p99 latencies, ratios and targets. It always exits 0 once it has
 * measured (a missed target is reported, not failed): benchmarks inform, they do not gate CI.
 */
const { values: args } = parseArgs({
  options: {
    files: { type: "string", default: "24000" },
    seed: { type: "string", default: "1" },
    dir: { type: "string" },
    quick: { type: "boolean", default: false },
    "cold-runs": { type: "string", default: "9" },
    markdown: { type: "string" },
    json: { type: "string" },
    only: { type: "string" }
  }
})

const files = Number(args.files)
const seed = Number(args.seed)
const divisor = args.quick ? 4 : 1
const plan: Plan = {
  fastWarmup: 50,
  fastIterations: Math.ceil(400 / divisor),
  searchWarmup: 3,
  searchIterations: Math.ceil(40 / divisor),
  scanIterations: Math.ceil(20 / divisor),
  slowIterations: Math.max(2, Math.ceil(4 / divisor))
}
const coldRuns = Math.max(3, Math.ceil(Number(args["cold-runs"]) / divisor))
if (!Number.isInteger(files) || files < 2000 || !Number.isInteger(seed)) {
  process.stderr.write("[bench] --files must be an integer ≥ 2000 and --seed an integer\n")
  process.exit(2)
}
const selected = new Set((args.only ?? OPERATION_KEYS.join(",")).split(",").map((k) => k.trim()))
for (const key of selected) {
  if (!(OPERATION_KEYS as ReadonlyArray<string>).includes(key)) {
    process.stderr.write(`[bench] --only: unknown operation ${key} (one of ${OPERATION_KEYS.join(", ")})\n`)
    process.exit(2)
  }
}
const only = (key: OperationKey): boolean => selected.has(key)
const root = path.resolve(args.dir ?? path.join(os.tmpdir(), "serverfs-bench", `tree-s${seed}-n${files}`))

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)
const started = performance.now()

const machine = (): Record<string, string> => {
  const cpus = os.cpus()
  const rgVersion = execFileSync(rgPath, ["--version"], { encoding: "utf8" }).split("\n")[0] ?? "?"
  return {
    cpu: `${cpus[0]?.model ?? "?"} × ${cpus.length}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    ripgrep: rgVersion,
    "server-filesystem": serverFilesystemVersion(serverFilesystemEntry()),
    serverfs: path.relative(process.cwd(), serverfsEntry()) || serverfsEntry()
  }
}

const main = async () => {
  const info = machine()
  log(`tree: ${root} (seed ${seed}, ${files} files)`)
  const tree = generateTree(root, { seed, files, rareCount: 160, findCount: 60 })
  log(
    tree.generatedInMs > 0
      ? `generated in ${(tree.generatedInMs / 1000).toFixed(1)} s`
      : "reusing the tree from its manifest"
  )
  const treeLine = `${tree.files} files, ${tree.directories} directories, ${(tree.bytes / 2 ** 20).toFixed(1)} MiB`

  const ours = serverfsLaunch(tree.root, 100)
  const theirs = serverFilesystemLaunch(tree.root)

  if (only("cold")) log(`cold start: ${coldRuns} runs each`)
  const cold = only("cold") ? await coldStart([ours, theirs], coldRuns) : undefined

  log("starting both servers for the workload")
  const serverfs = await McpSession.start(ours)
  const reference = await McpSession.start(theirs)
  let rows: Row[]
  try {
    await serverfs.listToolNames()
    await reference.listToolNames()
    log("sanity checks")
    await sanityCheck(tree, serverfs, reference)
    rows = await runWorkload(tree, serverfs, reference, plan, (m) => log(m), only)
    const ownMemory = memoryOf(serverfs.pid)
    const theirMemory = memoryOf(reference.pid)
    if (cold !== undefined) {
      rows.push({
        operation: "cold start: spawn → first tools/list",
        unit: "ms",
        serverfs: cold.get(ours.label)!,
        baselines: [{ label: "server-filesystem", summary: cold.get(theirs.label)! }],
        target: { against: "server-filesystem", maxRatio: 1 }
      })
    }
    if (only("rss")) {
      rows.push(
        {
          operation: "RSS (VmRSS) after the run",
          unit: "MiB",
          serverfs: single(ownMemory.rssMiB),
          baselines: [{ label: "server-filesystem", summary: single(theirMemory.rssMiB) }],
          target: { against: "server-filesystem", maxRatio: 0.8 }
        },
        {
          operation: "peak RSS (VmHWM) over the run",
          unit: "MiB",
          serverfs: single(ownMemory.peakMiB),
          baselines: [{ label: "server-filesystem", summary: single(theirMemory.peakMiB) }]
        }
      )
    }
  } catch (error) {
    log(`ServerFS stderr: ${serverfs.stderr}`)
    log(`server-filesystem stderr: ${reference.stderr}`)
    throw error
  } finally {
    await serverfs.close()
    await reference.close()
  }

  const targeted = rows.filter((r) => r.target !== undefined)
  const met = targeted.filter((r) => verdictOf(r) === "PASS").length
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  const header = [
    "ServerFS benchmark",
    ...Object.entries(info).map(([k, v]) => `  ${k}: ${v}`),
    `  tree: ${treeLine} (${tree.root})`,
    `  iterations: fast ops ${plan.fastIterations}, early-stop search ${plan.searchIterations}, scans ${plan.scanIterations}, server-filesystem search_files ${plan.slowIterations}, cold starts ${coldRuns}`,
    ""
  ].join("\n")
  process.stdout.write(`\n${header}\n${renderText(rows)}\n\n`)
  process.stdout.write(`${met} of ${targeted.length} targets met; ratios are ServerFS p50 / baseline p50.\n`)
  for (const row of targeted.filter((r) => verdictOf(r) === "MISS")) {
    process.stdout.write(
      `MISS: ${row.operation} (target ≤ ${row.target!.maxRatio}× ${row.target!.against})\n`
    )
  }
  process.stdout.write(`Finished in ${seconds} s.\n`)

  if (args.markdown !== undefined) {
    fs.writeFileSync(args.markdown, `${header.replace(/^ {2}/gm, "- ")}\n${renderMarkdown(rows)}\n`)
  }
  if (args.json !== undefined) {
    fs.writeFileSync(
      args.json,
      JSON.stringify({ machine: info, tree: treeLine, plan, coldRuns, rows }, null, 2)
    )
  }
}

main().catch((error: unknown) => {
  // The message says what to do; BENCH_DEBUG=1 adds the stack.
  const detail =
    error instanceof Error ? (process.env.BENCH_DEBUG ? error.stack : error.message) : String(error)
  process.stderr.write(`[bench] failed: ${detail}\n`)
  process.exit(1)
})
