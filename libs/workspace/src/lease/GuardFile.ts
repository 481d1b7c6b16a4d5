import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { canonicalJson } from "@serverfs/domain"
import { slotId } from "@serverfs/policy"
import {
  AT,
  close,
  fchown,
  fstat,
  fstatat,
  fsync,
  isPosixError,
  O,
  openat,
  renameat,
  unlinkat
} from "@serverfs/posix"
import { Data, Option, Schema } from "effect"
import { isRegular } from "../FileKind.js"
import { MAX_GUARD_BYTES, type RecoveryGuard, RecoveryGuardJson } from "./RecoveryGuard.js"

/**
 * The guard file `active/NN` (bridge-internals §9). The bridge reads, writes and removes it
 * relative to the active directory it holds open, so a swapped directory cannot redirect it;
 * serverfs-mcp only asks whether one is there.
 */
/** `<lock dir>/active/NN`, relative to the lock directory. */
export const guardName = (slot: number): string => `active/${slotId(slot)}`

export type GuardState =
  | { readonly _tag: "none" }
  | { readonly _tag: "valid"; readonly guard: RecoveryGuard }
  | { readonly _tag: "invalid" }

const NONE: GuardState = { _tag: "none" }
const INVALID: GuardState = { _tag: "invalid" }

export class GuardWriteFailed extends Data.TaggedError("GuardWriteFailed")<{ readonly errno: string }> {}

/** An I/O failure of the posix addon or of node:fs (which both carry an errno code). */
const isErrno = (error: unknown): error is Error & { readonly code: string } =>
  isPosixError(error) ||
  (error instanceof Error && /^E[A-Z0-9]+$/.test(String((error as NodeJS.ErrnoException).code)))

const decodeGuard = Schema.decodeUnknownOption(RecoveryGuardJson)

/** The whole file if it is at most MAX_GUARD_BYTES long, else undefined. */
const readBounded = (fd: number): string | undefined => {
  const buffer = Buffer.alloc(MAX_GUARD_BYTES + 1)
  let filled = 0
  while (filled < buffer.length) {
    const n = fs.readSync(fd, buffer, filled, buffer.length - filled, filled)
    if (n === 0) break
    filled += n
  }
  return filled > MAX_GUARD_BYTES ? undefined : buffer.toString("utf8", 0, filled)
}

/**
 * The slot's guard. Anything but a regular, bounded file holding one well-formed guard for this
 * slot is `invalid` — which still blocks writers (fail closed) but is never reconciled.
 */
export const readGuardAt = (activeFd: number, slot: number): GuardState => {
  let fd: number
  try {
    // O_NONBLOCK: a FIFO planted as the guard cannot hang the open.
    fd = openat(activeFd, slotId(slot), O.RDONLY | O.NOFOLLOW | O.NONBLOCK)
  } catch (error) {
    if (!isPosixError(error)) throw error
    return error.code === "ENOENT" ? NONE : INVALID
  }
  try {
    const stat = fstat(fd)
    if (!isRegular(stat) || stat.size > MAX_GUARD_BYTES) return INVALID
    const text = readBounded(fd)
    if (text === undefined) return INVALID
    return Option.match(decodeGuard(text), {
      onNone: () => INVALID,
      onSome: (guard): GuardState => (guard.slot === slot ? { _tag: "valid", guard } : INVALID)
    })
  } catch (error) {
    if (!isErrno(error)) throw error
    return INVALID
  } finally {
    close(fd)
  }
}

/** Publish (or replace) the slot's guard atomically: private temp file, fsync, rename, fsync dir. */
export const writeGuardAt = (
  activeFd: number,
  guard: RecoveryGuard,
  file: { readonly mode: number; readonly group?: number | undefined }
): GuardWriteFailed | undefined => {
  const temp = `.${slotId(guard.slot)}.${randomBytes(8).toString("hex")}.tmp`
  let created = false
  try {
    const fd = openat(activeFd, temp, O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW, file.mode)
    created = true
    try {
      fs.writeSync(fd, `${canonicalJson(guard)}\n`)
      fsync(fd)
      if (file.group !== undefined) fchown(fd, -1, file.group)
    } finally {
      close(fd)
    }
    renameat(activeFd, temp, activeFd, slotId(guard.slot))
    created = false
    // The guard must survive a crash of the bridge right after it was published.
    fsync(activeFd)
    return undefined
  } catch (error) {
    if (created) removeEntry(activeFd, temp)
    if (isErrno(error)) return new GuardWriteFailed({ errno: error.code })
    throw error
  }
}

const removeEntry = (activeFd: number, name: string): void => {
  try {
    unlinkat(activeFd, name, 0)
  } catch (error) {
    // Already gone, or not ours to remove: nothing else to do about it here.
    if (!isPosixError(error)) throw error
  }
}

/** Remove the slot's guard (a missing one is fine). */
export const removeGuardAt = (activeFd: number, slot: number): void => removeEntry(activeFd, slotId(slot))

/**
 * What serverfs-mcp needs to know about `<lock dir>/active/NN`, without opening it: nothing
 * there, a regular file (a guard), or something else (an unsafe lock tree).
 */
export const guardPresence = (guardPath: string): "none" | "guard" | "unsafe" => {
  try {
    return isRegular(fstatat(AT.FDCWD, guardPath, AT.SYMLINK_NOFOLLOW)) ? "guard" : "unsafe"
  } catch (error) {
    if (!isPosixError(error)) throw error
    return error.code === "ENOENT" ? "none" : "unsafe"
  }
}
