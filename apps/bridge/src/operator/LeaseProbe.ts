import * as fs from "node:fs"
import * as path from "node:path"
import type { LockPathUnsafe } from "@serverfs/domain"
import { AT, close, fstat } from "@serverfs/posix"
import {
  LockFileRefused,
  lockExclusiveSync,
  lockFileName,
  lockPathUnsafe,
  openLockFileSync
} from "@serverfs/workspace"
import { Effect } from "effect"

/**
 * Is a slot's lock file flock'ed by somebody, asked WITHOUT taking the flock (lease.list).
 *
 * Why not a non-blocking try: any flock this process takes — exclusive or shared — conflicts
 * with serverfs-mcp's own `flock(LOCK_EX|LOCK_NB)`, so an MCP mutation racing with the probe
 * would get a spurious WORKDIR_BUSY. Linux lists every held flock in /proc/locks as
 * `FLOCK ADVISORY WRITE <pid> <major>:<minor>:<inode>`: matching the lock file's device and
 * inode answers the question by reading, and disturbs nobody.
 *
 * Limits, said honestly: /proc/locks leaves out locks whose owner is outside this process's PID
 * namespace (a writer in another container looks free here), and the answer is a snapshot. Both
 * only affect this informational listing — `lease.recover` takes the real flock. Where
 * /proc/locks does not exist (not Linux), the probe falls back to a try-lock released at once:
 * for those microseconds a racing MCP mutation can see WORKDIR_BUSY and must retry.
 */
export type LockProbe = "locked" | "free"

/** The kernel's dev_t split as /proc/locks prints it (MAJOR/MINOR of the new encoding). */
const deviceNumbers = (dev: bigint): { readonly major: bigint; readonly minor: bigint } => ({
  major: ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn),
  minor: (dev & 0xffn) | ((dev >> 12n) & ~0xffn)
})

/** Does /proc/locks list a held FLOCK on this device and inode? (Waiters, `->`, hold nothing.) */
export const flockListed = (procLocks: string, dev: bigint, ino: bigint): boolean => {
  const { major, minor } = deviceNumbers(dev)
  return procLocks.split("\n").some((line) => {
    const fields = line.trim().split(/\s+/)
    if (fields[1] !== "FLOCK") return false
    const [maj, min, inode] = (fields[5] ?? "").split(":")
    if (maj === undefined || min === undefined || inode === undefined) return false
    return BigInt(`0x${maj}`) === major && BigInt(`0x${min}`) === minor && BigInt(inode) === ino
  })
}

const readProcLocks = (): string | undefined => {
  try {
    return fs.readFileSync("/proc/locks", "utf8")
  } catch (error) {
    // Node's fs errors carry an errno `code` (ENOENT off Linux, EACCES under a strict /proc).
    if (error instanceof Error && "code" in error) return undefined
    throw error
  }
}

export const probeLock = (lockDir: string, slot: number): Effect.Effect<LockProbe, LockPathUnsafe> =>
  Effect.suspend(() => {
    const opened = openLockFileSync(AT.FDCWD, path.join(lockDir, lockFileName(slot)))
    if (opened instanceof LockFileRefused)
      return Effect.fail(lockPathUnsafe(`file of slot ${slot} cannot be opened`))
    try {
      const listed = readProcLocks()
      if (listed !== undefined) {
        const stat = fstat(opened.fd)
        return Effect.succeed(flockListed(listed, stat.dev, stat.ino) ? "locked" : "free")
      }
      // Not Linux: a try-lock, released by the close below (see the race above).
      const refused = lockExclusiveSync(opened.fd)
      return refused === undefined
        ? Effect.succeed("free")
        : refused.problem === "busy"
          ? Effect.succeed("locked")
          : Effect.fail(lockPathUnsafe(`file of slot ${slot} cannot be locked`))
    } finally {
      close(opened.fd)
    }
  })
