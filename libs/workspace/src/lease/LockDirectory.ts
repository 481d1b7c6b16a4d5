import { LockPathUnsafe } from "@serverfs/domain"
import {
  openPrivateDirectory,
  type PrivateDirectory,
  type PrivateDirectoryProblem,
  preparePrivateDirectory
} from "@serverfs/posix"
import { Effect, type Scope } from "effect"

/**
 * The bridge's lock tree (`<lock dir>/` and `<lock dir>/active/`): private to the bridge user
 * (0700, files 0600), or searchable by the peer group in shared mode (0750, files 0640) so that
 * serverfs-mcp can open the lock files read-only and see the guards. Never writable by anyone
 * else — who could write there could plant or remove a guard.
 */
export interface LockModes {
  readonly group: number | undefined
  readonly dirMode: number
  readonly fileMode: number
}

export const lockModes = (peerGid: number | null): LockModes =>
  peerGid === null
    ? { group: undefined, dirMode: 0o700, fileMode: 0o600 }
    : { group: peerGid, dirMode: 0o750, fileMode: 0o640 }

export const lockPathUnsafe = (problem: string) =>
  new LockPathUnsafe({ message: `lock directory ${problem}` })

const LOCK_DIRECTORY_PHRASES: Readonly<Record<PrivateDirectoryProblem, string>> = {
  "not-absolute": "is not an absolute path",
  missing: "cannot be prepared",
  symlink: "is not a directory",
  "not-a-directory": "is not a directory",
  changed: "is not a directory",
  "foreign-owner": "is owned by another user",
  "writable-by-others": "is group- or world-writable",
  "wrong-mode": "cannot be prepared",
  "cannot-create": "cannot be prepared",
  "cannot-inspect": "cannot be prepared",
  "cannot-set-mode": "cannot be prepared",
  "cannot-set-group": "cannot be prepared"
}

const options = (modes: LockModes) =>
  ({ mode: modes.dirMode, existing: "conform", group: modes.group, parents: true }) as const

const unsafe = (refused: { readonly problem: PrivateDirectoryProblem }) =>
  lockPathUnsafe(LOCK_DIRECTORY_PHRASES[refused.problem])

/** Create (or check and bring to its mode) a directory of the lock tree. */
export const prepareLockDirectory = (dir: string, modes: LockModes): Effect.Effect<void, LockPathUnsafe> =>
  preparePrivateDirectory(dir, options(modes)).pipe(Effect.asVoid, Effect.mapError(unsafe))

/** The same, held open for the scope: later calls act relative to it, never by path again. */
export const openLockDirectory = (
  dir: string,
  modes: LockModes
): Effect.Effect<PrivateDirectory, LockPathUnsafe, Scope.Scope> =>
  openPrivateDirectory(dir, options(modes)).pipe(Effect.mapError(unsafe))
