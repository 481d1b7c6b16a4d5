import * as fs from "node:fs"
import * as path from "node:path"
import { McpSession } from "./McpDriver.js"
import { measure } from "./Measure.js"
import type { Row } from "./Report.js"
import { serverfsLaunch } from "./Servers.js"
import { single } from "./Stats.js"

/**
 * Streamable HTTP (issue 9): the same serverfs-mcp configuration started twice, once over stdio and
 * once over HTTP on loopback (one session, no token), timed side by side in interleaved rounds:
 * read_text_file of a 4 KiB file, tools/list, and ping (the transport and SDK floor, no tool
 * code). The goal is a difference, not a ratio: HTTP adds at most 0.3 ms p50 per call.
 */
export interface HttpPlan {
  readonly warmup: number
  readonly iterations: number
}

const WORKDIR = "bench"
const FILE = "http-4k.txt"
/** The goal of issue 9: what HTTP may add to a call's p50, in ms. */
const MAX_ADDED_P50_MS = 0.3

const STDIO = "serverfs-mcp over stdio"

/** 4096 bytes of text in 64-byte lines. */
const fourKiB = (): string => `${"x".repeat(63)}\n`.repeat(64)

export const runHttp = async (
  root: string,
  plan: HttpPlan,
  progress: (message: string) => void
): Promise<{ readonly rows: Row[]; readonly notes: string[] }> => {
  fs.writeFileSync(path.join(root, FILE), fourKiB())
  const launch = serverfsLaunch(root, 100)
  const stdio = await McpSession.start(launch)
  const http = await McpSession.startHttp(launch).catch(async (error: unknown) => {
    await stdio.close()
    throw error
  })
  try {
    // Sanity: both transports give back the same 4 KiB and the same tool list.
    const read = { workdir: WORKDIR, path: FILE }
    const textOf = async (session: McpSession) =>
      JSON.stringify((await session.call("read_text_file", read)).structuredContent)
    if ((await textOf(stdio)) !== (await textOf(http)))
      throw new Error("sanity check failed: read_text_file differs between stdio and HTTP")
    if ((await stdio.listToolNames()).join() !== (await http.listToolNames()).join())
      throw new Error("sanity check failed: tools/list differs between stdio and HTTP")

    const options = { warmup: plan.warmup, iterations: plan.iterations }
    const rows: Row[] = []
    const notes: string[] = []
    const pair = async (operation: string, run: (session: McpSession) => Promise<unknown>) => {
      progress(`${operation} over stdio and HTTP (${plan.iterations} rounds)`)
      const timed = await measure(
        [
          { label: "HTTP", run: () => run(http) },
          { label: STDIO, run: () => run(stdio) }
        ],
        options
      )
      const overHttp = timed.get("HTTP")!
      const overStdio = timed.get(STDIO)!
      rows.push({
        operation: `${operation} over HTTP`,
        unit: "ms",
        serverfs: overHttp,
        baselines: [{ label: STDIO, summary: overStdio }]
      })
      const added = overHttp.p50 - overStdio.p50
      rows.push({
        operation: `${operation}: HTTP − stdio (p50)`,
        unit: "ms",
        serverfs: single(added),
        baselines: [],
        limits: [{ stat: "p50", atMost: MAX_ADDED_P50_MS }]
      })
      notes.push(
        `http ${operation}: p50 ${overHttp.p50.toFixed(3)} ms over HTTP, ${overStdio.p50.toFixed(3)} ms over stdio (HTTP adds ${added.toFixed(3)} ms)`
      )
    }
    await pair("read_text_file 4 KiB", (session) => session.call("read_text_file", read))
    await pair("tools/list", (session) => session.listToolNames())
    await pair("ping", (session) => session.ping())
    return { rows, notes }
  } catch (error) {
    progress(`ServerFS stdio stderr: ${stdio.stderr}`)
    progress(`ServerFS HTTP stderr: ${http.stderr}`)
    throw error
  } finally {
    await http.close()
    await stdio.close()
  }
}
