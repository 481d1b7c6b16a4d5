import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { McpSession, type ServerLaunch, structured } from "./McpDriver.js"
import { profileArgs, serverFilesystemEntry, serverfsEntry } from "./Servers.js"
import { summarize } from "./Stats.js"

/**
 * The per-call profile driver (issue 12, docs/performance.md "Per-call cost"): repeats the
 * read-plane rows of the issue against one or more serverfs-mcp builds (and optionally
 * server-filesystem) on a small fixed tree, interleaved round by round with the order rotating,
 * and prints p50/mean per operation and each contender's ratio to the first.
 *
 *   node bench/dist/Profile.js [--op read4k,read5000,stat,list1000,workdirs,ping] [--calls 300]
 *     [--warmup 50] [--main A/dist/main.js --main B/dist/main.js] [--reference]
 *     [--log-level INFO|ERROR]
 *
 * With BENCH_PROFILE_DIR set every serverfs-mcp process writes a `.cpuprofile` there (Servers.ts),
 * so `--main X --op stat --calls 3000` is the profile run of one operation. `--main` twice is the
 * A/B run of a build before and after a change. The log level defaults to INFO, as in the issue's
 * run: every call then also writes its audit line.
 */
const OPS = ["read4k", "read5000", "stat", "list1000", "workdirs", "ping"] as const
type Op = (typeof OPS)[number]

const { values: args } = parseArgs({
  options: {
    op: { type: "string", default: OPS.join(",") },
    calls: { type: "string", default: "300" },
    warmup: { type: "string", default: "50" },
    main: { type: "string", multiple: true },
    reference: { type: "boolean", default: false },
    "log-level": { type: "string", default: "INFO" }
  }
})
const ops = args.op.split(",").map((o) => {
  if (!(OPS as ReadonlyArray<string>).includes(o)) throw new Error(`--op: unknown ${o} (${OPS.join(", ")})`)
  return o as Op
})
const calls = Number(args.calls)
const warmup = Number(args.warmup)

/** The tree of the issue's rows: a 4 KiB file, a 5,000-line file, a directory of 1,000 files. */
const makeTree = (): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-profile-"))
  const line = (i: number, width: number) => `${`line ${i} `.padEnd(width - 1, "x")}\n`
  fs.writeFileSync(path.join(root, "small.txt"), Array.from({ length: 64 }, (_, i) => line(i, 64)).join(""))
  fs.writeFileSync(path.join(root, "lines.txt"), Array.from({ length: 5000 }, (_, i) => line(i, 60)).join(""))
  fs.mkdirSync(path.join(root, "wide"))
  for (let i = 0; i < 1000; i++) {
    fs.writeFileSync(path.join(root, "wide", `entry-${String(i).padStart(4, "0")}.txt`), line(i, 40))
  }
  return root
}

interface Contender {
  readonly label: string
  readonly session: McpSession
  readonly run: (op: Op) => Promise<void>
}

const serverfs = async (label: string, entry: string, root: string): Promise<Contender> => {
  const launch: ServerLaunch = {
    label,
    command: process.execPath,
    args: [...profileArgs(), entry],
    env: { WORKDIR_01_ALIAS: "bench", WORKDIR_01_PATH: root, SERVERFS_LOG_LEVEL: args["log-level"] }
  }
  const session = await McpSession.start(launch)
  const w = "bench"
  const pages = async (
    tool: string,
    first: Record<string, unknown>,
    next: (out: Record<string, unknown>) => Record<string, unknown> | undefined
  ) => {
    let input: Record<string, unknown> | undefined = first
    while (input !== undefined) input = next(structured(await session.call(tool, input)))
  }
  const run = async (op: Op): Promise<void> => {
    switch (op) {
      case "ping":
        return session.ping()
      case "workdirs":
        return void (await session.call("list_workdirs", {}))
      case "stat":
        return void (await session.call("stat_file", { workdir: w, path: "small.txt" }))
      case "read4k":
        return void (await session.call("read_text_file", { workdir: w, path: "small.txt", max_lines: 500 }))
      case "read5000":
        return pages("read_text_file", { workdir: w, path: "lines.txt", max_lines: 500 }, (out) =>
          out.has_more === true
            ? { workdir: w, path: "lines.txt", max_lines: 500, start_line: out.next_start_line }
            : undefined
        )
      case "list1000":
        return pages("list_directory", { workdir: w, path: "wide", limit: 500 }, (out) =>
          out.has_more === true
            ? { workdir: w, path: "wide", limit: 500, offset: Number(out.offset) + 500 }
            : undefined
        )
    }
  }
  return { label, session, run }
}

/** server-filesystem's nearest calls (a whole-file read; a listing without sizes, as in the issue). */
const reference = async (root: string): Promise<Contender> => {
  const session = await McpSession.start({
    label: "server-filesystem",
    command: process.execPath,
    args: [serverFilesystemEntry(), root],
    env: {}
  })
  const real = fs.realpathSync(root)
  const run = async (op: Op): Promise<void> => {
    switch (op) {
      case "ping":
        return session.ping()
      case "workdirs":
        return void (await session.call("list_allowed_directories", {}))
      case "stat":
        return void (await session.call("get_file_info", { path: path.join(real, "small.txt") }))
      case "read4k":
        return void (await session.call("read_text_file", { path: path.join(real, "small.txt") }))
      case "read5000":
        return void (await session.call("read_text_file", { path: path.join(real, "lines.txt") }))
      case "list1000":
        return void (await session.call("list_directory", { path: path.join(real, "wide") }))
    }
  }
  return { label: "server-filesystem", session, run }
}

const main = async (): Promise<void> => {
  const root = makeTree()
  const mains = args.main ?? [serverfsEntry()]
  const contenders: Contender[] = []
  try {
    for (const [i, entry] of mains.entries()) {
      contenders.push(
        await serverfs(
          mains.length === 1 ? "ServerFS" : `ServerFS ${String.fromCharCode(65 + i)}`,
          entry,
          root
        )
      )
    }
    if (args.reference) contenders.push(await reference(root))
    const samples = new Map<string, number[]>()
    for (const op of ops) {
      for (const c of contenders) for (let i = 0; i < warmup; i++) await c.run(op)
      for (let round = 0; round < calls; round++) {
        for (let k = 0; k < contenders.length; k++) {
          const c = contenders[(round + k) % contenders.length]!
          const started = performance.now()
          await c.run(op)
          const key = `${op}\t${c.label}`
          const list = samples.get(key) ?? []
          list.push(performance.now() - started)
          samples.set(key, list)
        }
      }
      const base = summarize(samples.get(`${op}\t${contenders[0]!.label}`)!).p50
      for (const c of contenders) {
        const { p50, mean } = summarize(samples.get(`${op}\t${c.label}`)!)
        console.log(
          `${op.padEnd(9)} ${c.label.padEnd(18)} p50 ${p50.toFixed(3).padStart(8)} ms  mean ${mean.toFixed(3).padStart(8)} ms  ×${(p50 / base).toFixed(2)}`
        )
      }
    }
  } finally {
    for (const c of contenders) await c.session.close()
    fs.rmSync(root, { recursive: true, force: true })
  }
}

await main()
