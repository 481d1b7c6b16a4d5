import * as fs from "node:fs"
import * as path from "node:path"

/**
 * What a running process's environment holds, read from /proc/<pid>/environ (the environment it
 * was started with): for the tests that prove a provider child never inherits ServerFS's own
 * configuration (SERVERFS_*, WORKDIR_*).
 */

/** The environment of `pid`, or undefined when it is gone (or not ours to read). */
export const environOf = (pid: number): ReadonlyMap<string, string> | undefined => {
  try {
    const raw = fs.readFileSync(path.join("/proc", String(pid), "environ"), "utf8")
    const out = new Map<string, string>()
    for (const entry of raw.split("\0")) {
      const eq = entry.indexOf("=")
      if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1))
    }
    return out
  } catch {
    return undefined
  }
}

/**
 * The environments of the live processes (other than this one) that have exactly `name=value`,
 * each read once: a short-lived provider child (a shell snapshot) can be gone by a second read,
 * so a test asserts on this one snapshot and never reads /proc again for the same process.
 */
export const environmentsWith = (name: string, value: string): ReadonlyArray<ReadonlyMap<string, string>> =>
  fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .map((entry) => environOf(Number(entry)))
    .filter((env): env is ReadonlyMap<string, string> => env?.get(name) === value)

/** The SERVERFS_* / WORKDIR_* names in an environment (none expected in a provider child). */
export const serverFsNames = (env: ReadonlyMap<string, string>): ReadonlyArray<string> =>
  [...env.keys()].filter((name) => /^(SERVERFS_|WORKDIR_)/.test(name))
