import { McpSession, type ServerLaunch } from "./McpDriver.js"
import { type Summary, summarize } from "./Stats.js"

/**
 * Cold start: from spawning the process to the first tools/list response (spawn, Node start-up,
 * module loading, initialize handshake, tools/list). The servers take turns, run after run, and
 * each run is a fresh process that is closed before the next one starts.
 */
export const coldStart = async (
  launches: ReadonlyArray<ServerLaunch>,
  runs: number
): Promise<Map<string, Summary>> => {
  const samples = new Map<string, number[]>(launches.map((l) => [l.label, []]))
  for (let run = 0; run < runs; run++) {
    for (let k = 0; k < launches.length; k++) {
      const launch = launches[(run + k) % launches.length]!
      const started = performance.now()
      const session = await McpSession.start(launch)
      const tools = await session.listToolNames()
      const elapsed = performance.now() - started
      await session.close()
      if (tools.length === 0) throw new Error(`${launch.label} listed no tools`)
      samples.get(launch.label)!.push(elapsed)
    }
  }
  return new Map([...samples].map(([label, xs]) => [label, summarize(xs)]))
}
