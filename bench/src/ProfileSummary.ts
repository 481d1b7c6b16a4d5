import * as fs from "node:fs"

/**
 * Summarize V8 `.cpuprofile` files (from `BENCH_PROFILE_DIR`, see Profile.ts): self time by
 * function and by where the code lives (ServerFS's own packages, effect, the MCP SDK, zod, Node
 * internals, native/GC), as percentages of the sampled time.
 *
 *   node bench/dist/ProfileSummary.js FILE.cpuprofile [--top 40]
 */
interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const areaOf = (url: string, name: string): string => {
  if (url === "") return name.startsWith("(") ? name : "native"
  if (url.startsWith("node:")) return "node internals"
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (match !== null && !match[1]!.startsWith("@serverfs")) return match[1]!
  const own = /\/(apps|libs)\/([^/]+)\//.exec(url)
  return own === null ? url : `serverfs ${own[2]}`
}

const [file, ...rest] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: ProfileSummary FILE.cpuprofile [--top N]")
const top = rest[0] === "--top" ? Number(rest[1]) : 40
const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n] as const))
const selfTime = new Map<number, number>()
let total = 0
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0
  selfTime.set(id, (selfTime.get(id) ?? 0) + dt)
  total += dt
})
const byFunction = new Map<string, number>()
const byArea = new Map<string, number>()
let idle = 0
for (const [id, time] of selfTime) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame
  if (functionName === "(idle)" || functionName === "(program)") {
    if (functionName === "(idle)") idle += time
  }
  const area = areaOf(url, functionName)
  const key = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(node_modules|apps|libs)\//, "$1/")}:${lineNumber + 1}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + time)
  byArea.set(area, (byArea.get(area) ?? 0) + time)
}
const busy = total - idle
const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)} %`
console.log(
  `sampled ${(total / 1000).toFixed(0)} ms, busy (not idle) ${(busy / 1000).toFixed(0)} ms; shares of busy time`
)
console.log("\nby area")
for (const [area, t] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
  if (area !== "(idle)") console.log(`${pct(t)}  ${area}`)
}
console.log("\nby function (self)")
for (const [key, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  if (!key.startsWith("(idle)")) console.log(`${pct(t)}  ${key}`)
}
