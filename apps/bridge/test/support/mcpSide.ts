/**
 * What serverfs-mcp does before a filesystem mutation (bridge-internals §9), from this test
 * process — a process other than the bridge: open the slot's existing lock file
 * O_RDONLY|O_NOFOLLOW, take flock(LOCK_EX|LOCK_NB) (a conflict is WORKDIR_BUSY, and the busy
 * check wins), then look for the recovery guard `active/NN` (WORKDIR_RECOVERY_REQUIRED).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { AT, close, flock, isWouldBlock, LOCK, O, openat } from "@serverfs/posix"

export type MutationGate = "free" | "WORKDIR_BUSY" | "WORKDIR_RECOVERY_REQUIRED"

const slotId = (slot: number) => String(slot).padStart(2, "0")

export const lockPath = (lockDir: string, slot: number) => path.join(lockDir, `${slotId(slot)}.lock`)
export const guardPath = (lockDir: string, slot: number) => path.join(lockDir, "active", slotId(slot))

/** Can another process take the slot's flock right now? (Taken and released at once.) */
export const flockFree = (lockDir: string, slot: number): boolean => {
  const fd = openat(AT.FDCWD, lockPath(lockDir, slot), O.RDONLY | O.NOFOLLOW)
  try {
    flock(fd, LOCK.EX | LOCK.NB)
    return true
  } catch (error) {
    if (isWouldBlock(error)) return false
    throw error
  } finally {
    close(fd)
  }
}

/** The MCP mutation gate for a slot. */
export const mutationGate = (lockDir: string, slot: number): MutationGate => {
  if (!flockFree(lockDir, slot)) return "WORKDIR_BUSY"
  return fs.existsSync(guardPath(lockDir, slot)) ? "WORKDIR_RECOVERY_REQUIRED" : "free"
}

export const readGuard = (
  lockDir: string,
  slot: number
): { readonly text: string; readonly json: unknown } => {
  const text = fs.readFileSync(guardPath(lockDir, slot), "utf8")
  return { text, json: JSON.parse(text) as unknown }
}
