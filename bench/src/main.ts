#!/usr/bin/env node
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { rgPath } from "@vscode/ripgrep"
import { runBinary } from "./Binary.js"
import { type BridgePlan, runBridge } from "./Bridge.js"
import { coldStart } from "./ColdStart.js"
import { runHostile } from "./Hostile.js"
import { runHttp } from "./Http.js"
import { McpSession } from "./McpDriver.js"
import { type MutationPlan, runMutations } from "./Mutations.js"
import { type RecorderPlan, runRecorder } from "./Recorder.js"
import {
  checksOf,
  goalOf,
  type Measurement,
  type Row,
  renderMarkdown,
  renderMeasurementsMarkdown,
  renderMeasurementsText,
  renderText
} from "./Report.js"
import { memoryOf } from "./Rss.js"
import { sanityCheck } from "./Sanity.js"
import {
  bridgeEntry,
  serverFilesystemEntry,
  serverFilesystemLaunch,
  serverFilesystemVersion,
  serverfsBinaryLaunch,
  serverfsEntry,
  serverfsLaunch,
  serverfsMutationLaunch
} from "./Servers.js"
import { single } from "./Stats.js"
import { generateTree } from "./TreeGenerator.js"
import { OPERATION_KEYS, type OperationKey, type Plan, runWorkload } from "./Workload.js"

/**
 * The benchmark: serverfs-mcp against raw calls, raw ripgrep and
 * @modelcontextprotocol/server-filesystem, side by side on one generated tree; its mutations
 * against server-filesystem's and the raw fsync cost; and the Agent Bridge (submit round trip,
 * events persisted per second, idle RSS) against raw SQLite and Unix-socket baselines.
 *
 *   node bench/dist/main.js [--files 24000] [--seed 1] [--dir PATH] [--quick]
 *                           [--cold-runs 9] [--write-bytes 4096]
 *                           [--event-tasks 8] [--events-per-task 2500]
 *                           [--only floor,search,scan,find,read,stat,list,cold,rss,mutations,binary,bridge,hostile,recorder,http]
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
    "write-bytes": { type: "string", default: "4096" },
    "event-tasks": { type: "string", default: "8" },
    "events-per-task": { type: "string", default: "2500" },
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
const mutationPlan: MutationPlan = {
  warmup: 20,
  iterations: Math.ceil(200 / divisor),
  bytes: Number(args["write-bytes"])
}
const bridgePlan: BridgePlan = {
  warmup: 20,
  iterations: Math.ceil(200 / divisor),
  eventTasks: Number(args["event-tasks"]),
  eventsPerTask: Number(args["events-per-task"])
}
const recorderPlan: RecorderPlan = { runs: 3, samples: Math.ceil(20_000 / divisor) }
const usage = (message: string): never => {
  process.stderr.write(`[bench] ${message}\n`)
  process.exit(2)
}
if (!Number.isInteger(files) || files < 2000 || !Number.isInteger(seed)) {
  usage("--files must be an integer ≥ 2000 and --seed an integer")
}
if (!Number.isInteger(mutationPlan.bytes) || mutationPlan.bytes < 64 || mutationPlan.bytes > 1_048_576) {
  usage("--write-bytes must be an integer from 64 to 1048576")
}
if (!Number.isInteger(bridgePlan.eventTasks) || bridgePlan.eventTasks < 1 || bridgePlan.eventTasks > 64) {
  usage("--event-tasks must be an integer from 1 to 64")
}
// The bridge keeps at most 10,000 events per task; the task adds three of its own.
if (
  !Number.isInteger(bridgePlan.eventsPerTask) ||
  bridgePlan.eventsPerTask < 1 ||
  bridgePlan.eventsPerTask > 9900
) {
  usage("--events-per-task must be an integer from 1 to 9900")
}
/** The suites beyond the read rows: each is one `--only` key. */
const SUITE_KEYS = ["mutations", "binary", "bridge", "hostile", "recorder", "http"] as const
type SuiteKey = (typeof SUITE_KEYS)[number]
const ALL_KEYS: ReadonlyArray<string> = [...OPERATION_KEYS, ...SUITE_KEYS]
const selected = new Set((args.only ?? ALL_KEYS.join(",")).split(",").map((k) => k.trim()))
for (const key of selected) {
  if (!ALL_KEYS.includes(key)) usage(`--only: unknown operation ${key} (one of ${ALL_KEYS.join(", ")})`)
}
const only = (key: OperationKey | SuiteKey): boolean => selected.has(key)
const readSuites = OPERATION_KEYS.some(only)
const root = path.resolve(args.dir ?? path.join(os.tmpdir(), "serverfs-bench", `tree-s${seed}-n${files}`))

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)
const started = performance.now()

const shown = (file: string): string => path.relative(process.cwd(), file) || file

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
    serverfs: shown(serverfsEntry()),
    ...(only("bridge") ? { "serverfs-bridge": shown(bridgeEntry()) } : {})
  }
}

/** The filesystem type and mount options of a directory (from /proc/self/mounts), for the report. */
const fsTypeOf = (dir: string): string => {
  try {
    const real = fs.realpathSync(dir)
    const mounts = fs
      .readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .filter((f) => f.length >= 4 && (real === f[1] || real.startsWith(f[1] === "/" ? "/" : `${f[1]}/`)))
      .sort((a, b) => b[1]!.length - a[1]!.length)
    const mount = mounts[0]
    return mount === undefined ? "?" : `${mount[2]}, ${mount[3]}`
  } catch {
    return "?"
  }
}

const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")

/** The read rows: one generated tree, both servers, the interleaved workload, cold start, RSS. */
const readSuite = async (): Promise<{ rows: Row[]; treeLine: string; root: string }> => {
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
          target: { against: "server-filesystem", maxRatio: 1, goal: 0.8 }
        },
        {
          operation: "peak RSS (VmHWM) over the run",
          unit: "MiB",
          serverfs: single(ownMemory.peakMiB),
          baselines: [{ label: "server-filesystem", summary: single(theirMemory.peakMiB) }],
          target: { against: "server-filesystem", maxRatio: 1.5 }
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
  return { rows, treeLine, root: tree.root }
}

/**
 * The mutation rows: serverfs-mcp (read-write workdir) and server-filesystem on one fresh
 * directory, removed afterwards.
 */
const mutationSuite = async (): Promise<{
  rows: Row[]
  fsyncs: Measurement[]
  root: string
  fsType: string
}> => {
  const parent = path.join(os.tmpdir(), "serverfs-bench")
  fs.mkdirSync(parent, { recursive: true })
  const mutationRoot = fs.mkdtempSync(path.join(parent, "mutations-"))
  log(`mutations in ${mutationRoot}`)
  const serverfs = await McpSession.start(serverfsMutationLaunch(mutationRoot))
  const reference = await McpSession.start(serverFilesystemLaunch(mutationRoot))
  try {
    await serverfs.listToolNames()
    await reference.listToolNames()
    const results = await runMutations(mutationRoot, serverfs, reference, mutationPlan, (m) => log(m))
    return { ...results, root: mutationRoot, fsType: fsTypeOf(mutationRoot) }
  } catch (error) {
    log(`ServerFS stderr: ${serverfs.stderr}`)
    log(`server-filesystem stderr: ${reference.stderr}`)
    throw error
  } finally {
    await serverfs.close()
    await reference.close()
    fs.rmSync(mutationRoot, { recursive: true, force: true })
  }
}

/** Above this 1-minute load average (on this 2-core machine) the figures are mostly noise. */
const BUSY_LOAD = 3

const main = async () => {
  const info = machine()
  const loadAtStart = loadAverage()
  const load1 = os.loadavg()[0] ?? 0
  if (load1 > BUSY_LOAD) {
    log(
      `the 1-minute load average is ${load1.toFixed(1)}: other work competes for the CPU and the disk; expect inflated, noisy figures`
    )
  }
  const rows: Row[] = []
  const fsyncs: Measurement[] = []
  const notes: string[] = []
  const runs: string[] = []
  if (readSuites) {
    const read = await readSuite()
    rows.push(...read.rows)
    runs.push(
      `  tree: ${read.treeLine} (${read.root})`,
      `  iterations: fast ops ${plan.fastIterations}, early-stop search ${plan.searchIterations}, scans ${plan.scanIterations}, server-filesystem search_files ${plan.slowIterations}, cold starts ${coldRuns}`
    )
  }
  if (only("mutations")) {
    const mutations = await mutationSuite()
    rows.push(...mutations.rows)
    fsyncs.push(...mutations.fsyncs)
    runs.push(
      `  mutations: ${mutationPlan.iterations} rounds after ${mutationPlan.warmup} warm-up, ${mutationPlan.bytes}-byte files, in ${mutations.root} (${mutations.fsType})`
    )
  }
  if (only("binary")) {
    const parent = path.join(os.tmpdir(), "serverfs-bench")
    fs.mkdirSync(parent, { recursive: true })
    const binaryRoot = fs.mkdtempSync(path.join(parent, "binary-"))
    const binaryPlan = { warmup: args.quick ? 1 : 3, iterations: args.quick ? 5 : 20 }
    log(`binary transfer in ${binaryRoot}`)
    const serverfs = await McpSession.start(serverfsBinaryLaunch(binaryRoot))
    const reference = await McpSession.start(serverFilesystemLaunch(binaryRoot))
    try {
      const binary = await runBinary(binaryRoot, serverfs, reference, binaryPlan, (m) => log(m))
      rows.push(...binary.rows)
      notes.push(...binary.notes)
      runs.push(
        `  binary: ${binaryPlan.iterations} rounds after ${binaryPlan.warmup} warm-up, random bytes, in ${binaryRoot} (${fsTypeOf(binaryRoot)})`
      )
    } catch (error) {
      log(`ServerFS stderr: ${serverfs.stderr}`)
      log(`server-filesystem stderr: ${reference.stderr}`)
      throw error
    } finally {
      await serverfs.close()
      await reference.close()
      fs.rmSync(binaryRoot, { recursive: true, force: true })
    }
  }
  if (only("bridge")) {
    log("Agent Bridge")
    const bridge = await runBridge(bridgePlan, (m) => log(m))
    rows.push(...bridge.rows)
    notes.push(...bridge.notes)
    runs.push(
      `  bridge: ${bridgePlan.iterations} submit rounds after ${bridgePlan.warmup} warm-up; events ${bridgePlan.eventTasks} × ${bridgePlan.eventsPerTask}; state under ${os.tmpdir()} (${fsTypeOf(os.tmpdir())})`
    )
  }

  if (only("recorder")) {
    log("diagnostics recorder (in process)")
    const recorder = runRecorder(recorderPlan, (m) => log(m))
    rows.push(...recorder.rows)
    notes.push(...recorder.notes)
    runs.push(`  recorder: ${recorderPlan.runs} runs × ${recorderPlan.samples} samples, in process`)
  }

  if (only("http")) {
    const parent = path.join(os.tmpdir(), "serverfs-bench")
    fs.mkdirSync(parent, { recursive: true })
    const httpRoot = fs.mkdtempSync(path.join(parent, "http-"))
    const httpPlan = { warmup: 50, iterations: Math.ceil(400 / divisor) }
    log(`Streamable HTTP against stdio in ${httpRoot}`)
    try {
      const http = await runHttp(httpRoot, httpPlan, (m) => log(m))
      rows.push(...http.rows)
      notes.push(...http.notes)
      runs.push(
        `  http: ${httpPlan.iterations} rounds after ${httpPlan.warmup} warm-up, loopback, one session each`
      )
    } finally {
      fs.rmSync(httpRoot, { recursive: true, force: true })
    }
  }

  if (only("hostile")) {
    const hostileRoot = path.join(os.tmpdir(), "serverfs-bench", "hostile")
    const iterations = args.quick ? 2 : 3
    const hostile = await runHostile(hostileRoot, { iterations }, (m) => log(m))
    rows.push(...hostile.rows)
    notes.push(...hostile.notes)
    runs.push(`  hostile: ${iterations} rounds per attack, tree in ${hostileRoot} (${fsTypeOf(hostileRoot)})`)
  }

  const checks = rows.flatMap(checksOf)
  const met = checks.filter((c) => c.pass).length
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  const header = [
    "ServerFS benchmark",
    ...Object.entries(info).map(([k, v]) => `  ${k}: ${v}`),
    ...runs,
    `  load average (1/5/15 min): ${loadAtStart} at the start, ${loadAverage()} at the end`,
    ""
  ].join("\n")
  process.stdout.write(`\n${header}\n${renderText(rows)}\n\n`)
  if (fsyncs.length > 0) {
    process.stdout.write(`fsync cost on this disk (raw, the server's steps, same file size):\n\n`)
    process.stdout.write(`${renderMeasurementsText(fsyncs)}\n\n`)
  }
  for (const note of notes) process.stdout.write(`${note}\n`)
  process.stdout.write(
    `${met} of ${checks.length} targets met; ratios are ServerFS / baseline (p50 unless marked p99).\n`
  )
  for (const check of checks.filter((c) => !c.pass))
    process.stdout.write(`MISS: ${check.description.trim()}\n`)
  const goals = rows.flatMap((row) => goalOf(row) ?? [])
  if (goals.length > 0)
    process.stdout.write(
      `${goals.filter((g) => g.pass).length} of ${goals.length} goals reached${
        goals.some((g) => !g.pass)
          ? `; not yet: ${goals
              .filter((g) => !g.pass)
              .map((g) => g.description.trim())
              .join("; ")}`
          : ""
      }.\n`
    )
  process.stdout.write(`Finished in ${seconds} s.\n`)

  if (args.markdown !== undefined) {
    const fsyncTable = fsyncs.length === 0 ? "" : `\n${renderMeasurementsMarkdown(fsyncs)}\n`
    fs.writeFileSync(
      args.markdown,
      `${header.replace(/^ {2}/gm, "- ")}\n${renderMarkdown(rows)}\n${fsyncTable}`
    )
  }
  if (args.json !== undefined) {
    fs.writeFileSync(
      args.json,
      JSON.stringify(
        {
          machine: info,
          runs,
          load: { start: loadAtStart, end: loadAverage() },
          plan,
          mutationPlan,
          bridgePlan,
          recorderPlan,
          coldRuns,
          rows,
          fsyncs,
          notes
        },
        null,
        2
      )
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
