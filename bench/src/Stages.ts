import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { makeListDirectoryInput, StatFileInput } from "@serverfs/domain"
import { McpServer, McpServerLayer } from "@serverfs/mcp"
import { resolvePath, WorkdirRegistry } from "@serverfs/policy"
import { AT, close, fstatat, fstatatEntries, O, readdir } from "@serverfs/posix"
import { AuditLog, AuditSink } from "@serverfs/telemetry-local"
import {
  compareCodePoints,
  openDirectorySync,
  ReadChannels,
  revisionOf,
  sortByCodePoint,
  timestampOf,
  timestampOfSeconds,
  WorkdirRoots
} from "@serverfs/workspace"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Runtime, Schema } from "effect"

/**
 * Microbenchmarks of the stages of one read-plane call, in process (issue 12; docs/performance.md
 * "Per-call cost"): each stage is run in a loop and reported in µs per call (median of 5 batches);
 * the list stages also per entry. The tree is Profile.ts's: a 4 KiB file and 1,000 entries.
 *
 *   node bench/dist/Stages.js [--iterations 2000]
 */
const iterations = process.argv[2] === "--iterations" ? Number(process.argv[3]) : 2000

const root = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-stages-"))
fs.writeFileSync(path.join(root, "small.txt"), "x".repeat(63).concat("\n").repeat(64))
fs.mkdirSync(path.join(root, "wide"))
for (let i = 0; i < 1000; i++)
  fs.writeFileSync(path.join(root, "wide", `entry-${String(i).padStart(4, "0")}.txt`), "x\n")

const rows: Array<[string, number, number | undefined]> = []
const measure = async (stage: string, body: () => unknown, perEntry?: number): Promise<void> => {
  const batches: number[] = []
  for (let b = 0; b < 6; b++) {
    const started = performance.now()
    for (let i = 0; i < iterations; i++) {
      const out = body()
      if (out instanceof Promise) await out
    }
    if (b > 0) batches.push(((performance.now() - started) * 1000) / iterations)
  }
  const median = batches.sort((a, z) => a - z)[2]!
  rows.push([stage, median, perEntry === undefined ? undefined : median / perEntry])
  console.error(`${stage}: ${median.toFixed(1)} µs`)
}

const layer = McpServerLayer.pipe(
  Layer.provideMerge(Layer.succeed(AuditSink, { write: () => undefined })),
  Layer.provide(
    Layer.setConfigProvider(
      ConfigProvider.fromMap(
        new Map([
          ["WORKDIR_01_ALIAS", "bench"],
          ["WORKDIR_01_PATH", root]
        ])
      )
    )
  )
)
const managed = ManagedRuntime.make(layer)
const runtime = await managed.runtime()
const services = await managed.runPromise(
  Effect.all({
    mcp: McpServer,
    channels: ReadChannels,
    registry: WorkdirRegistry,
    roots: WorkdirRoots,
    audit: AuditLog
  })
)
const workdir = Effect.runSync(services.registry.get("bench"))
const rootFd = services.roots.rootOf(workdir)
const at = { workdir: "bench", path: "wide" }

// Argument decoding, path policy, walk, stat, revision, timestamp.
const decodeStat = Schema.decodeUnknownEither(StatFileInput, { onExcessProperty: "error" })
await measure("decode arguments (stat_file)", () => decodeStat({ workdir: "bench", path: "small.txt" }))
const decodeList = Schema.decodeUnknownEither(makeListDirectoryInput(500), { onExcessProperty: "error" })
await measure("decode arguments (list_directory)", () =>
  decodeList({ workdir: "bench", path: "wide", limit: 500 })
)
await measure("resolve path + deny checks", () => resolvePath(workdir, "wide/entry-0001.txt"))
await measure("descriptor walk (openat2 + close)", () =>
  close(openDirectorySync(rootFd, ["wide"], O.PATH, at))
)
const dirFd = openDirectorySync(rootFd, ["wide"], O.PATH, at)
const stat = fstatat(rootFd, "small.txt", AT.SYMLINK_NOFOLLOW)
await measure("fstatat (native, object with BigInts)", () =>
  fstatat(rootFd, "small.txt", AT.SYMLINK_NOFOLLOW)
)
await measure("revision hash (SHA-256)", () => revisionOf(stat))
await measure("timestamp (RFC 3339)", () => timestampOf(stat.mtimeNs))

// Effect: the runtime hop per request, a scoped acquire/release.
const run = Runtime.runPromise(runtime)
await measure("Runtime.runPromise(Effect.void)", () => run(Effect.void))
await measure("Effect.scoped(acquireRelease) runSync", () =>
  Effect.runSync(
    Effect.scoped(
      Effect.acquireRelease(
        Effect.sync(() => 1),
        () => Effect.void
      )
    )
  )
)
await measure("audit line (emit, memory sink)", () =>
  Effect.runSync(
    services.audit.emit("INFO", "tool_call", {
      tool: "stat_file",
      workdir: "bench",
      path: "small.txt",
      success: true
    })
  )
)

// The channel, and the whole call in process (SDK on both ends, no pipe).
await measure("stat_file channel (runPromise)", () =>
  run(services.channels.statFile({ workdir: "bench", path: "small.txt" }))
)
const statOutput = await run(services.channels.statFile({ workdir: "bench", path: "small.txt" }))
const result = {
  content: [{ type: "text", text: JSON.stringify(statOutput) }],
  structuredContent: statOutput
}
await measure("encode result text (JSON.stringify)", () => JSON.stringify(statOutput))
await measure("SDK result validation (zod)", () => CallToolResultSchema.safeParse(result))
await measure("JSON-RPC message (JSON.stringify)", () => JSON.stringify({ jsonrpc: "2.0", id: 1, result }))
const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair()
const server = services.mcp.make()
await server.connect(serverEnd)
const client = new Client({ name: "stages", version: "0" })
await client.connect(clientEnd)
const call = (name: string, args: Record<string, unknown>) =>
  client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema)
await measure("whole call in process: list_workdirs", () => call("list_workdirs", {}))
await measure("whole call in process: stat_file", () =>
  call("stat_file", { workdir: "bench", path: "small.txt" })
)
await measure("whole call in process: read_text_file 4 KiB", () =>
  call("read_text_file", { workdir: "bench", path: "small.txt", max_lines: 500 })
)

// Per entry: a page of 500 of 1,000 entries.
const listing = readdir(dirFd)
await measure("list: readdir 1,000 names", () => readdir(dirFd), 1000)
await measure(
  "list: policy check 1,000 names",
  () => listing.names.filter((n) => workdir.policy.checkChild("wide", n) === "allowed"),
  1000
)
await measure("list: sort 1,000 names (comparator)", () => [...listing.names].sort(compareCodePoints), 1000)
await measure("list: sort 1,000 names (sortByCodePoint)", () => sortByCodePoint([...listing.names]), 1000)
const page = listing.names.slice(0, 500)
await measure("list: fstatat 500 entries", () => page.map((n) => fstatat(dirFd, n, AT.SYMLINK_NOFOLLOW)), 500)
await measure(
  "list: fstatatEntries 500 entries (one call)",
  () => fstatatEntries(dirFd, page, AT.SYMLINK_NOFOLLOW),
  500
)
const stats = page.map((n) => fstatat(dirFd, n, AT.SYMLINK_NOFOLLOW))
await measure("list: timestamp 500 entries", () => stats.map((s) => timestampOf(s.mtimeNs)), 500)
const seconds = fstatatEntries(dirFd, page, AT.SYMLINK_NOFOLLOW).map((s) => s?.mtimeSeconds ?? 0)
await measure("list: timestamp 500 entries from seconds", () => seconds.map(timestampOfSeconds), 500)
const listOutput = await run(
  services.channels.listDirectory({ workdir: "bench", path: "wide", offset: 0, limit: 500 })
)
await measure("list: encode 500 entries (JSON.stringify)", () => JSON.stringify(listOutput), 500)
const listResult = {
  content: [{ type: "text", text: JSON.stringify(listOutput) }],
  structuredContent: listOutput
}
await measure("list: SDK result validation (zod)", () => CallToolResultSchema.safeParse(listResult), 500)
await measure(
  "list: JSON-RPC message of 500",
  () => JSON.stringify({ jsonrpc: "2.0", id: 1, result: listResult }),
  500
)
await measure(
  "list: channel, page of 500 (runPromise)",
  () => run(services.channels.listDirectory({ workdir: "bench", path: "wide", offset: 0, limit: 500 })),
  500
)
await measure(
  "list: whole call in process, page of 500",
  () => call("list_directory", { workdir: "bench", path: "wide", limit: 500 }),
  500
)

close(dirFd)
await client.close()
await managed.dispose()
fs.rmSync(root, { recursive: true, force: true })
console.log("| stage | µs per call | µs per entry |\n|---|---:|---:|")
for (const [stage, us, entry] of rows) {
  console.log(`| ${stage} | ${us.toFixed(1)} | ${entry === undefined ? "" : entry.toFixed(2)} |`)
}
