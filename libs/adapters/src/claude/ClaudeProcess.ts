import { type ChildProcess, type ChildProcessByStdio, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import type { Readable, Writable } from "node:stream"
import type { SpawnedProcess, SpawnOptions } from "@anthropic-ai/claude-agent-sdk"
import { Effect } from "effect"

/**
 * The Claude Code CLI as a process: which executable, how it is started (its own process group,
 * so a turn's tools go with it), how it is probed, and how a later bridge process proves that a
 * previous one's CLI is gone. Host paths here never leave the adapter.
 */

/** The one environment rule for every provider CLI (shared with the Codex adapter). */
export { childEnvironment } from "../ChildEnvironment.js"

const isExecutableFile = (file: string): boolean => {
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return false
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** A command name looked up on PATH (of the given environment), or an absolute path. */
export const resolveOnPath = (command: string, pathVariable: string | undefined): string | undefined => {
  if (path.isAbsolute(command)) return isExecutableFile(command) ? command : undefined
  if (command.includes("/")) return undefined
  for (const dir of (pathVariable ?? "").split(path.delimiter)) {
    if (dir === "" || !path.isAbsolute(dir)) continue
    const candidate = path.join(dir, command)
    if (isExecutableFile(candidate)) return candidate
  }
  return undefined
}

/** The Claude Code binary the Agent SDK package ships (its platform package), if installed. */
export const bundledExecutable = (): string | undefined => {
  const require = createRequire(import.meta.url)
  const names =
    process.platform === "linux"
      ? [`linux-${process.arch}`, `linux-${process.arch}-musl`]
      : [`${process.platform}-${process.arch}`]
  for (const name of names) {
    try {
      const file = require.resolve(`@anthropic-ai/claude-agent-sdk-${name}/claude`)
      if (isExecutableFile(file)) return file
    } catch {
      // not this platform package
    }
  }
  return undefined
}

/** `claude --version` within the timeout, without starting a session: "2.1.332 (Claude Code)". */
export const probeVersion = (
  executable: string,
  environment: Record<string, string | undefined>,
  timeoutSeconds: number
): Effect.Effect<{ readonly version: string } | { readonly problem: string }> =>
  Effect.async((resume) => {
    // execFile bounds the child itself (timeout, SIGKILL); an interrupted probe kills it too.
    const child = execFile(
      executable,
      ["--version"],
      {
        env: environment,
        timeout: Math.max(1, timeoutSeconds * 1000),
        killSignal: "SIGKILL",
        maxBuffer: 65536
      },
      (error, stdout) => {
        if (error !== null) {
          resume(
            Effect.succeed({
              problem: error.killed ? "claude --version timed out" : "claude --version failed"
            })
          )
          return
        }
        const match = /(\d+\.\d+\.\d+\S*)/.exec(stdout)
        resume(
          Effect.succeed(
            match?.[1] === undefined
              ? { problem: "claude --version printed no version" }
              : { version: match[1] }
          )
        )
      }
    )
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  })

// ---- the CLI's process group -------------------------------------------------------------------

/** Linux: the process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
export const startTicks = (pid: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return fields[19]
  } catch {
    return undefined
  }
}

/**
 * The recorded identity of a turn's CLI: `cli:<pid>:<start ticks>`. The pid is also the process
 * group (the CLI is spawned as a group leader), and the start time tells a recycled pid apart.
 * It is stored as the task's native turn id (private, never shown to clients).
 */
export const processTurnId = (pid: number): string => `cli:${pid}:${startTicks(pid) ?? "?"}`

export const parseProcessTurnId = (
  turnId: string | null
): { readonly pid: number; readonly ticks: string } | undefined => {
  const match = /^cli:(\d+):(\d+|\?)$/.exec(turnId ?? "")
  if (match?.[1] === undefined || match[2] === undefined) return undefined
  const pid = Number(match[1])
  return Number.isSafeInteger(pid) && pid > 1 ? { pid, ticks: match[2] } : undefined
}

/** Does any process of the group still exist? (kill(-pgid, 0): ESRCH means none.) */
export const groupExists = (pgid: number): boolean | undefined => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ESRCH" ? false : code === "EPERM" ? true : undefined
  }
}

export const killGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // already gone
  }
}

/**
 * The SDK's `spawnClaudeCodeProcess`: the CLI is started exactly as the SDK would start it
 * (command, arguments, environment, cwd from the SDK), but as the leader of its own process group,
 * so stopping a turn also stops the commands its tools started, and so a later bridge can tell
 * whether anything of it survives. stderr is kept (bounded) for error messages.
 */
export const spawnInGroup = (
  options: SpawnOptions,
  onSpawn: (child: ChildProcess) => void,
  onStderr: (text: string) => void
): SpawnedProcess => {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true
  })
  child.stderr.on("data", (chunk: Buffer) => onStderr(chunk.toString("utf8")))
  // A failed spawn (ENOENT, EACCES) is reported by the SDK's own listener; this one keeps it from
  // ever becoming an uncaught exception of the bridge.
  child.on("error", (error) => onStderr(`${error.message}\n`))
  const pid = child.pid
  // The SDK aborts this signal only after its graceful stdin-EOF window: then stop the group.
  options.signal.addEventListener(
    "abort",
    () => {
      if (pid !== undefined) killGroup(pid, "SIGTERM")
    },
    { once: true }
  )
  child.once("exit", () => {
    // Tools the CLI left behind (its group) go with it.
    if (pid !== undefined) killGroup(pid, "SIGKILL")
  })
  onSpawn(child)
  return asSpawnedProcess(child)
}

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void
type ErrorListener = (error: Error) => void

/** The child as the SDK's `SpawnedProcess` (a view: its streams, state and events). */
const asSpawnedProcess = (child: ChildProcessByStdio<Writable, Readable, Readable>): SpawnedProcess => ({
  stdin: child.stdin,
  stdout: child.stdout,
  get killed() {
    return child.killed
  },
  get exitCode() {
    return child.exitCode
  },
  get signalCode() {
    return child.signalCode
  },
  kill: (signal) => child.kill(signal),
  on: (event: "exit" | "error", listener: ExitListener | ErrorListener) => {
    child.on(event, listener)
  },
  once: (event: "exit" | "error", listener: ExitListener | ErrorListener) => {
    child.once(event, listener)
  },
  off: (event: "exit" | "error", listener: ExitListener | ErrorListener) => {
    child.off(event, listener)
  }
})
