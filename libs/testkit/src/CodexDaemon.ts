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
 * Pids of live processes that run with `CODEX_HOME=home` exactly: everything a daemon of this
 * home started, whatever its command line. A SIGKILLed app-server (the restart tests) leaves
 * its children running — the login shells of Codex's shell snapshot and what they run — and
 * they name the home only in their environment. (The bridge's own SERVERFS_CODEX_HOME is
 * another variable and does not match.)
 */
const processesWithCodexHome = (home: string): ReadonlyArray<number> => {
  const entry = Buffer.from(`CODEX_HOME=${home}\0`)
  const found: number[] = []
  for (const pid of livePids()) {
    try {
      const environ = fs.readFileSync(path.join("/proc", String(pid), "environ"))
      for (let at = environ.indexOf(entry); at !== -1; at = environ.indexOf(entry, at + 1)) {
        if (at === 0 || environ[at - 1] === 0) {
          found.push(pid)
          break
        }
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return found
}

/**
 * Stop everything the daemon of `home` runs — the updater loop first (so it restarts nothing),
 * the app-server, then every process still carrying the home (the orphans of an earlier,
 * SIGKILLed incarnation and anything they forked meanwhile, hence the rounds) — and remove its
 * sockets under /tmp/codex-daemon-<uid>/ (the shared directory itself stays).
 */
export const cleanupCodexDaemon = async (home: string): Promise<void> => {
  const targets = socketTargets(home)
  const updater = codexUpdaterPid(home)
  if (updater !== undefined) await terminate(updater, 2_000)
  const daemon = codexDaemonPid(home)
  if (daemon !== undefined) await terminate(daemon, 2_000)
  for (let round = 0; round < 5; round++) {
    const rest = [
      ...new Set([...processesMentioning(home, { environ: false }), ...processesWithCodexHome(home)])
    ]
    if (rest.length === 0) break
    await Promise.all(rest.map((pid) => terminate(pid, round === 0 ? 2_000 : 0)))
  }
  for (const target of targets) {
    fs.rmSync(target, { force: true })
    fs.rmSync(`${target}.lock`, { force: true })
  }
}

/** The pids under /proc other than this process. */
const livePids = (): ReadonlyArray<number> =>
  fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .map(Number)

/** Pids of live processes whose command line or environment mentions `needle` (leak checks). */
export const processesMentioning = (
  needle: string,
  options: { readonly environ?: boolean } = {}
): ReadonlyArray<number> => {
  const found: number[] = []
  const files = options.environ === false ? ["cmdline"] : ["cmdline", "environ"]
  for (const pid of livePids()) {
    for (const file of files) {
      try {
        if (fs.readFileSync(path.join("/proc", String(pid), file)).includes(needle)) {
          found.push(pid)
          break
        }
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return found
}
