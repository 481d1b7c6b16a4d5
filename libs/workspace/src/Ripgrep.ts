import { type ChildProcess, spawn } from "node:child_process"
import { rgPath } from "@vscode/ripgrep"
import { Effect } from "effect"
import { type RawMatch, RecordSplitter } from "./RipgrepRecords.js"

export type { RawMatch } from "./RipgrepRecords.js"

/**
 * One ripgrep run (tool-contracts §2.4): an argv array (never a shell), started inside a held
 * directory fd through `/proc/self/fd/N` so the search root cannot be swapped underneath it,
 * with an empty environment (no RIPGREP_CONFIG_PATH, no HOME-based global ignore file) and
 * `--no-config`. The JSON stream is split into records in linear time and bounded memory
 * (RipgrepRecords.ts) and the process is stopped as soon as the caller has enough.
 */
export interface RipgrepOptions {
  readonly cwdFd: number
  readonly query: string
  readonly caseSensitive: boolean
  readonly glob: string | null
  readonly hidden: boolean
  readonly maxFileBytes: number
  readonly excludes: ReadonlyArray<string>
  readonly timeoutSeconds: number
  /** Longest matched-line preview kept per match (SERVERFS_SEARCH_MAX_LINE_BYTES). */
  readonly maxLineBytes: number
}

export type RipgrepOutcome =
  | { readonly _tag: "completed" }
  | { readonly _tag: "stopped" }
  | { readonly _tag: "timeout" }
  | { readonly _tag: "failed" }
  /** rg could not be started for lack of file descriptors (EMFILE/ENFILE). */
  | { readonly _tag: "exhausted" }

/** Why a child could not be started: out of descriptors, or anything else. */
const spawnFailure = (error: unknown): RipgrepOutcome => {
  const code = (error as { readonly code?: unknown } | undefined)?.code
  return code === "EMFILE" || code === "ENFILE" ? { _tag: "exhausted" } : { _tag: "failed" }
}

/** Grace between SIGTERM and SIGKILL when the deadline passes. */
const KILL_GRACE_MS = 2000

export const ripgrepArgs = (options: RipgrepOptions): ReadonlyArray<string> => [
  "--no-config",
  "--json",
  "--no-messages",
  "--fixed-strings",
  // No ignore files at all (.gitignore, .ignore, .rgignore, global ones): search sees exactly what
  // find_files and list_directory see, whatever directory it starts from.
  "--no-ignore",
  ...(options.hidden ? ["--hidden"] : []),
  "--max-filesize",
  String(options.maxFileBytes),
  ...(options.caseSensitive ? [] : ["--ignore-case"]),
  ...(options.glob === null ? [] : ["--glob", options.glob]),
  ...options.excludes.flatMap((e) => ["--glob", e]),
  "--",
  options.query,
  "."
]

/**
 * Run ripgrep, handing each match to `accept`; `accept` returns false to stop the search.
 * Interruption kills the process.
 */
export const runRipgrep = (
  options: RipgrepOptions,
  accept: (match: RawMatch) => boolean
): Effect.Effect<RipgrepOutcome> =>
  Effect.async<RipgrepOutcome>((resume) => {
    let child: ChildProcess
    try {
      child = spawn(rgPath, [...ripgrepArgs(options)], {
        cwd: `/proc/self/fd/${options.cwdFd}`,
        env: {},
        stdio: ["ignore", "pipe", "ignore"]
      })
    } catch (error) {
      resume(Effect.succeed(spawnFailure(error)))
      return
    }
    let finished = false
    let stopped = false
    let timedOut = false
    let sawSummary = false
    let killTimer: NodeJS.Timeout | undefined
    const stop = () => {
      if (stopped) return
      stopped = true
      child.kill("SIGTERM")
      killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS)
    }
    const deadline = setTimeout(() => {
      timedOut = true
      stop()
    }, options.timeoutSeconds * 1000)

    const records = new RecordSplitter(options.maxLineBytes, (record) => {
      if (stopped) return
      if (record === "summary") sawSummary = true
      else if (record !== undefined && !accept(record)) stop()
    })
    const finish = (outcome: RipgrepOutcome) => {
      if (finished) return
      finished = true
      clearTimeout(deadline)
      if (killTimer !== undefined) clearTimeout(killTimer)
      resume(Effect.succeed(outcome))
    }
    // Listen for "error" first: a spawn that fails (EMFILE while creating its pipes) reports it
    // as an event, and leaves no stdout; an unlistened "error" event would crash the process.
    child.on("error", (error) => finish(spawnFailure(error)))
    child.stdout?.on("data", (chunk: Buffer) => {
      if (!stopped) records.push(chunk)
    })
    child.on("close", (code) => {
      if (!stopped) records.end()
      if (timedOut) return finish({ _tag: "timeout" })
      if (stopped) return finish({ _tag: "stopped" })
      // 0: matches, 1: none. 2 with a summary: the search ran but some entry could not be read
      // (an unreadable file must not fail every search); 2 without one: rg refused to run.
      if (code === 0 || code === 1 || (code === 2 && sawSummary)) return finish({ _tag: "completed" })
      return finish({ _tag: "failed" })
    })
    return Effect.sync(() => {
      clearTimeout(deadline)
      if (killTimer !== undefined) clearTimeout(killTimer)
      child.kill("SIGKILL")
    })
  })
