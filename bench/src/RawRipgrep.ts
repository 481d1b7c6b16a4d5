import { spawn } from "node:child_process"
import { DenyPolicy } from "@serverfs/policy"
import { rgPath } from "@vscode/ripgrep"

/**
 * Raw ripgrep, spawned the way search_text spawns it (same binary from @vscode/ripgrep, same
 * argv, empty environment, stdout piped into this process), with the cheapest consumer that can
 * still stop it: split lines, count `"type":"match"` records, nothing parsed.
 */
export const SEARCH_EXCLUDES = [
  "!.git",
  "!.hg",
  "!.svn",
  "!.serverfs-tmp-*",
  "!.serverfs-disabled*",
  // The built-in deny rules, which search_text passes to rg as excludes with the default policy.
  ...DenyPolicy.make({ allowHidden: false, disableDefaultDeny: false, extraDenyGlobs: [] }).ripgrepExcludes()
]

export const searchArgs = (query: string): string[] => [
  "--no-config",
  "--json",
  "--no-messages",
  "--fixed-strings",
  "--no-ignore",
  "--max-filesize",
  "52428800",
  ...SEARCH_EXCLUDES.flatMap((glob) => ["--glob", glob]),
  "--",
  query,
  "."
]

export interface RgRun {
  /** Match records seen (files for --files). */
  readonly count: number
  readonly stopped: boolean
}

/**
 * Run rg in `cwd`; once `stopAt` records satisfying `isRecord` have been seen, SIGTERM it.
 * Resolves when the process has exited (as the server's search does).
 */
const run = (
  args: ReadonlyArray<string>,
  cwd: string,
  isRecord: (line: string) => boolean,
  stopAt: number
): Promise<RgRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(rgPath, [...args], { cwd, env: {}, stdio: ["ignore", "pipe", "ignore"] })
    let count = 0
    let stopped = false
    let pending = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      if (stopped) return
      const lines = (pending + chunk).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (!isRecord(line)) continue
        if (++count >= stopAt) {
          stopped = true
          child.kill("SIGTERM")
          return
        }
      }
    })
    child.on("error", reject)
    child.on("close", (code) => {
      if (!stopped && pending !== "" && isRecord(pending)) count++
      if (stopped || code === 0 || code === 1) resolve({ count, stopped })
      else reject(new Error(`rg exited with ${code}`))
    })
  })

const isMatch = (line: string): boolean => line.startsWith('{"type":"match"')

/** `rg --json <query>`, killed at the `stopAt`-th match (Infinity: a full scan). */
export const rgJson = (cwd: string, query: string, stopAt = Number.POSITIVE_INFINITY): Promise<RgRun> =>
  run(searchArgs(query), cwd, isMatch, stopAt)

/** `rg --files -g <glob>`: the file-name search floor. */
export const rgFiles = (cwd: string, glob: string): Promise<RgRun> =>
  run(["--no-config", "--files", "-g", glob], cwd, (line) => line !== "", Number.POSITIVE_INFINITY)
