import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { codexBin } from "./CodexHome.js"
import { eventuallyAsync } from "./Eventually.js"

/**
 * The official managed Codex app-server daemon of one test CODEX_HOME (codex-app-server-offline
 * §4): started with `codex app-server daemon start` (which copies the CLI into the home, so
 * share one daemon across the tests of a file), killed and cleaned up by pid files — the
 * app-server AND its `pid-update-loop`, which `daemon stop` leaves running — with the sockets it
 * keeps under /tmp/codex-daemon-<uid>/.
 */
export const controlSocket = (home: string): string =>
  path.join(home, "app-server-control", "app-server-control.sock")

const daemonDir = (home: string) => path.join(home, "app-server-daemon")

const readPid = (file: string): number | undefined => {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { readonly pid?: unknown }
    return typeof parsed.pid === "number" ? parsed.pid : undefined
  } catch {
    return undefined
  }
}

/** The app-server's pid, from `$CODEX_HOME/app-server-daemon/daemon.pid`. */
const codexDaemonPid = (home: string): number | undefined => readPid(path.join(daemonDir(home), "daemon.pid"))

const codexUpdaterPid = (home: string): number | undefined =>
  readPid(path.join(daemonDir(home), "daemon-updater.pid"))

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Resolves once `pid` is gone, or after `timeoutMs` (the caller escalates or gives up). */
const gone = (pid: number, timeoutMs: number, intervalMs: number): Promise<void> =>
  eventuallyAsync(
    `process ${pid} to exit`,
    () => (alive(pid) ? undefined : true),
    timeoutMs,
    intervalMs
  ).then(
    () => undefined,
    () => undefined
  )

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
const terminate = async (pid: number, graceMs: number): Promise<void> => {
  if (!alive(pid)) return
  try {
    process.kill(pid, graceMs === 0 ? "SIGKILL" : "SIGTERM")
  } catch {
    return
  }
  if (graceMs > 0) await gone(pid, graceMs, 50)
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      return
    }
  }
  await gone(pid, 5_000, 20)
}

interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `codex <args>` with CODEX_HOME=home, bounded. */
const runCodex = (
  home: string,
  args: ReadonlyArray<string>,
  timeoutMs = 60_000,
  env: Readonly<Record<string, string>> = {}
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(codexBin, [...args], {
      env: { ...process.env, ...env, CODEX_HOME: home },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8")
    })
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8")
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`codex ${args.join(" ")} timed out:\n${stderr}`))
    }, timeoutMs)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** `codex app-server daemon start`; resolves once the control socket exists. */
export const startCodexDaemon = async (home: string): Promise<void> => {
  const result = await runCodex(home, ["app-server", "daemon", "start"], 90_000)
  if (result.code !== 0 || !fs.existsSync(controlSocket(home))) {
    throw new Error(`codex app-server daemon start failed (${result.code}):\n${result.stderr}`)
  }
}

/** Crash the app-server (SIGKILL), leaving its socket files as a crash does. */
export const killCodexDaemon = async (home: string): Promise<void> => {
  const pid = codexDaemonPid(home)
  if (pid !== undefined) await terminate(pid, 0)
}

/** The real sockets behind the home's symlinks (under /tmp/codex-daemon-<uid>/). */
const socketTargets = (home: string): ReadonlyArray<string> =>
  [controlSocket(home), path.join(daemonDir(home), "daemon-updater.sock")].flatMap((link) => {
    try {
      const target = fs.readlinkSync(link)
      return [path.isAbsolute(target) ? target : path.resolve(path.dirname(link), target)]
    } catch {
      return []
    }
  })

/**
 * Stop everything the daemon of `home` runs — the app-server, the updater loop — and remove
 * its sockets under /tmp/codex-daemon-<uid>/ (the shared directory itself stays).
 */
export const cleanupCodexDaemon = async (home: string): Promise<void> => {
  const targets = socketTargets(home)
  const pids = [codexDaemonPid(home), codexUpdaterPid(home)].filter((p): p is number => p !== undefined)
  await Promise.all(pids.map((pid) => terminate(pid, 2_000)))
  // An updater of an earlier incarnation (after a kill + start) is no longer in the pid file.
  await Promise.all(processesMentioning(home, { environ: false }).map((pid) => terminate(pid, 2_000)))
  for (const target of targets) {
    fs.rmSync(target, { force: true })
    fs.rmSync(`${target}.lock`, { force: true })
  }
}

/** Pids of live processes whose command line or environment mentions `needle` (leak checks). */
export const processesMentioning = (
  needle: string,
  options: { readonly environ?: boolean } = {}
): ReadonlyArray<number> => {
  const found: number[] = []
  const files = options.environ === false ? ["cmdline"] : ["cmdline", "environ"]
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    for (const file of files) {
      try {
        if (fs.readFileSync(path.join("/proc", entry, file)).includes(needle)) {
          found.push(Number(entry))
          break
        }
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return found
}
