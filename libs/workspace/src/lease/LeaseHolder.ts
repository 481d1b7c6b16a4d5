import * as path from "node:path"
import { type LockPathUnsafe, WorkdirBusy, WorkdirRecoveryRequired } from "@serverfs/domain"
import { SLOT_COUNT } from "@serverfs/policy"
import { close } from "@serverfs/posix"
import { Effect, Exit, Scope } from "effect"
import { type GuardState, readGuardAt, removeGuardAt, writeGuardAt } from "./GuardFile.js"
import { lockModes, lockPathUnsafe, openLockDirectory } from "./LockDirectory.js"
import {
  holdLockFile,
  type LockFileProblem,
  LockFileRefused,
  lockFileName,
  openLockFileSync
} from "./LockFile.js"
import type { RecoveryGuard } from "./RecoveryGuard.js"

/**
 * The holder role of the workdir lease (spec v0.3 §21, bridge-internals §9), run by the bridge.
 * At start the lock directory, `active/` and all 16 slot lock files are pre-created (0700/0600,
 * or 0750/0640 with the peer group in shared mode) — serverfs-mcp only ever opens them
 * read-only — and both directories are held open: every later open, guard write and removal is
 * relative to them. A workspace-write task holds flock(LOCK_EX|LOCK_NB) on its slot's file for
 * its whole turn (a second writer gets WORKDIR_BUSY: no hidden queue), each held lock file in
 * its own Scope (closed by `release`, or with the holder's scope at shutdown), and publishes the
 * recovery guard `active/NN` atomically.
 */
export interface HeldLease {
  readonly slot: number
  readonly fd: number
}

export interface LeaseHolderOptions {
  readonly lockDir: string
  /** The peer group of shared mode, or null for a private lock tree. */
  readonly peerGid: number | null
}

const LOCK_FILE_PHRASES: Readonly<Record<LockFileProblem, string>> = {
  "cannot-open": "cannot be opened",
  "not-a-regular-file": "is not a plain file",
  "hard-linked": "is not a plain file",
  "foreign-owner": "is owned by another user",
  "cannot-set-mode": "cannot be prepared",
  busy: "is locked by another process",
  "cannot-lock": "cannot be locked"
}

const fileUnsafe = (slot: number, refused: LockFileRefused): LockPathUnsafe =>
  lockPathUnsafe(`file ${lockFileName(slot)} ${LOCK_FILE_PHRASES[refused.problem]}`)

export const makeLeaseHolder = (options: LeaseHolderOptions) =>
  Effect.gen(function* () {
    const modes = lockModes(options.peerGid)
    const file = { mode: modes.fileMode, group: modes.group }
    const lockDir = yield* openLockDirectory(options.lockDir, modes)
    const activeDir = yield* openLockDirectory(path.join(options.lockDir, "active"), modes)

    for (let slot = 1; slot <= SLOT_COUNT; slot++) {
      const prepared = openLockFileSync(lockDir.fd, lockFileName(slot), { create: file })
      if (prepared instanceof LockFileRefused) return yield* fileUnsafe(slot, prepared)
      close(prepared.fd)
    }

    // One Scope per held slot; the holder's own finalizer closes whatever is still held.
    const held = new Map<number, { readonly fd: number; readonly scope: Scope.CloseableScope }>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...held.keys()], (slot) => release(slot), { discard: true })
    )

    /** Take the slot's writer lease (non-blocking). */
    const acquire = (slot: number, alias: string): Effect.Effect<HeldLease, WorkdirBusy | LockPathUnsafe> =>
      Effect.uninterruptible(
        Effect.gen(function* () {
          if (held.has(slot)) return yield* new WorkdirBusy({ workdir: alias })
          const scope = yield* Scope.make()
          const locked = yield* holdLockFile(lockDir.fd, lockFileName(slot), { owned: true }).pipe(
            Scope.extend(scope),
            Effect.mapError((refused) =>
              refused.problem === "busy" ? new WorkdirBusy({ workdir: alias }) : fileUnsafe(slot, refused)
            ),
            Effect.onError(() => Scope.close(scope, Exit.void))
          )
          held.set(slot, { fd: locked.fd, scope })
          return { slot, fd: locked.fd }
        })
      )

    const release = (slot: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        const lease = held.get(slot)
        if (lease === undefined) return Effect.void
        held.delete(slot)
        return Scope.close(lease.scope, Exit.void)
      })

    const holds = (slot: number): boolean => held.has(slot)

    const writeGuard = (guard: RecoveryGuard): Effect.Effect<void, LockPathUnsafe> =>
      Effect.suspend(() =>
        writeGuardAt(activeDir.fd, guard, file) === undefined
          ? Effect.void
          : Effect.fail(lockPathUnsafe("guard cannot be written"))
      )

    /** The slot's guard, if any. An unreadable or malformed guard still blocks writers. */
    const readGuard = (slot: number): Effect.Effect<GuardState> =>
      Effect.sync(() => readGuardAt(activeDir.fd, slot))

    /** Publish the guard unless the slot already has one (valid or not): that slot needs recovery. */
    const publishGuard = (
      guard: RecoveryGuard
    ): Effect.Effect<void, WorkdirRecoveryRequired | LockPathUnsafe> =>
      Effect.flatMap(
        readGuard(guard.slot),
        (existing): Effect.Effect<void, WorkdirRecoveryRequired | LockPathUnsafe> =>
          existing._tag === "none"
            ? writeGuard(guard)
            : Effect.fail(new WorkdirRecoveryRequired({ workdir: guard.workdir_alias }))
      )

    const removeGuard = (slot: number): Effect.Effect<void> =>
      Effect.sync(() => removeGuardAt(activeDir.fd, slot))

    /** Every slot holding a well-formed guard, in slot order; a missing or malformed guard is left out. */
    const validGuards = (): Effect.Effect<
      ReadonlyArray<{ readonly slot: number; readonly guard: RecoveryGuard }>
    > =>
      Effect.sync(() => {
        const found: Array<{ readonly slot: number; readonly guard: RecoveryGuard }> = []
        for (let slot = 1; slot <= SLOT_COUNT; slot++) {
          const state = readGuardAt(activeDir.fd, slot)
          if (state._tag === "valid") found.push({ slot, guard: state.guard })
        }
        return found
      })

    return { acquire, release, holds, publishGuard, writeGuard, removeGuard, readGuard, validGuards } as const
  })

export type LeaseHolder = Effect.Effect.Success<ReturnType<typeof makeLeaseHolder>>
