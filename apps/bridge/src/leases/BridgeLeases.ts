import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { canonicalJson, LockPathUnsafe, WorkdirBusy, WorkdirRecoveryRequired } from "@serverfs/domain"
import { type BridgeSettings, Configuration, SLOT_COUNT, slotId } from "@serverfs/policy"
import { AT, close, flock, isWouldBlock, LOCK, O, openat } from "@serverfs/posix"
import { guardName, lockFileName } from "@serverfs/workspace"
import { Effect, Option, Schema } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { lockModes, lockPathUnsafe, prepareLockDirectory } from "./LockDirectory.js"
import { RecoveryGuard } from "./RecoveryGuard.js"

/**
 * The bridge side of the workdir lease (spec v0.3 §21, bridge-internals §9). At startup the lock
 * directory and all 16 slot lock files are pre-created (0700/0600, or 0750/0640 with the peer
 * group in shared mode) — serverfs-mcp only ever opens them read-only. A workspace-write task
 * holds `flock(LOCK_EX|LOCK_NB)` on its slot's file for its whole turn (a second writer gets
 * WORKDIR_BUSY: no hidden queue) and publishes the recovery guard `active/NN` atomically.
 */
export interface HeldLease {
  readonly slot: number
  readonly fd: number
}

export class BridgeLeases extends Effect.Service<BridgeLeases>()("@serverfs/bridge/BridgeLeases", {
  scoped: Effect.gen(function* () {
    const { global } = yield* Configuration
    const settings: BridgeSettings = yield* BridgeSettingsTag
    const lockDir = global.agentLockDir
    const activeDir = path.join(lockDir, "active")
    const { shared, fileMode } = lockModes(settings)
    const unsafe = lockPathUnsafe

    const prepareLockFile = (slot: number) =>
      Effect.try({
        try: () => {
          const file = path.join(lockDir, lockFileName(slot))
          const fd = openat(AT.FDCWD, file, O.RDONLY | O.CREAT | O.NOFOLLOW | O.NONBLOCK, fileMode)
          try {
            const stat = fs.fstatSync(fd)
            if (!stat.isFile() || stat.nlink !== 1)
              throw unsafe(`file ${lockFileName(slot)} is not a plain file`)
            if (stat.uid !== process.getuid?.())
              throw unsafe(`file ${lockFileName(slot)} is owned by another user`)
            fs.fchmodSync(fd, fileMode)
            if (shared && settings.peerGid !== null) fs.fchownSync(fd, -1, settings.peerGid)
          } finally {
            close(fd)
          }
        },
        catch: (e) =>
          e instanceof LockPathUnsafe ? e : unsafe(`file ${lockFileName(slot)} cannot be prepared`)
      })

    yield* prepareLockDirectory(lockDir, settings)
    yield* prepareLockDirectory(activeDir, settings)
    for (let slot = 1; slot <= SLOT_COUNT; slot++) yield* prepareLockFile(slot)

    const held = new Map<number, number>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const fd of held.values()) close(fd)
        held.clear()
      })
    )

    /** Take the slot's writer lease (non-blocking). */
    const acquire = (slot: number, alias: string): Effect.Effect<HeldLease, WorkdirBusy | LockPathUnsafe> =>
      Effect.suspend(() => {
        if (held.has(slot)) return Effect.fail(new WorkdirBusy({ workdir: alias }))
        let fd: number
        try {
          fd = openat(AT.FDCWD, path.join(lockDir, lockFileName(slot)), O.RDWR | O.NOFOLLOW | O.NONBLOCK)
        } catch {
          return Effect.fail(unsafe(`file ${lockFileName(slot)} cannot be opened`))
        }
        try {
          flock(fd, LOCK.EX | LOCK.NB)
        } catch (error) {
          close(fd)
          return Effect.fail(
            isWouldBlock(error) ? new WorkdirBusy({ workdir: alias }) : unsafe("lock failed")
          )
        }
        held.set(slot, fd)
        return Effect.succeed({ slot, fd })
      })

    const release = (slot: number): Effect.Effect<void> =>
      Effect.sync(() => {
        const fd = held.get(slot)
        if (fd !== undefined) {
          held.delete(slot)
          close(fd)
        }
      })

    const holds = (slot: number): boolean => held.has(slot)

    const guardPath = (slot: number) => path.join(lockDir, guardName(slot))

    /** Publish (or replace) the slot's guard atomically: temp file, fsync, rename. */
    const writeGuard = (guard: RecoveryGuard): Effect.Effect<void, LockPathUnsafe> =>
      Effect.try({
        try: () => {
          const temp = path.join(activeDir, `.${slotId(guard.slot)}.${randomBytes(8).toString("hex")}.tmp`)
          const fd = fs.openSync(
            temp,
            fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
            fileMode
          )
          try {
            fs.writeSync(fd, `${canonicalJson(guard)}\n`)
            fs.fsyncSync(fd)
            if (shared && settings.peerGid !== null) fs.fchownSync(fd, -1, settings.peerGid)
          } finally {
            fs.closeSync(fd)
          }
          fs.renameSync(temp, guardPath(guard.slot))
        },
        catch: () => unsafe("guard cannot be written")
      })

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
      Effect.sync(() => {
        try {
          fs.unlinkSync(guardPath(slot))
        } catch {
          // Already gone.
        }
      })

    type GuardState =
      | { readonly _tag: "none" }
      | { readonly _tag: "valid"; readonly guard: RecoveryGuard }
      | { readonly _tag: "invalid" }

    /** The slot's guard, if any. An unreadable or malformed guard still blocks writers. */
    const readGuard = (slot: number): Effect.Effect<GuardState> =>
      Effect.sync((): GuardState => {
        let text: string
        try {
          const stat = fs.lstatSync(guardPath(slot))
          if (!stat.isFile()) return { _tag: "invalid" }
          text = fs.readFileSync(guardPath(slot), "utf8")
        } catch (e) {
          return (e as NodeJS.ErrnoException).code === "ENOENT" ? { _tag: "none" } : { _tag: "invalid" }
        }
        const decoded = Option.liftThrowable(() => JSON.parse(text) as unknown)().pipe(
          Option.flatMap(Schema.decodeUnknownOption(RecoveryGuard))
        )
        return Option.match(decoded, {
          onNone: () => ({ _tag: "invalid" }),
          onSome: (guard) => ({ _tag: "valid", guard })
        })
      })

    /** Every slot holding a well-formed guard, in slot order; a missing or malformed guard is left out. */
    const validGuards = (): Effect.Effect<
      ReadonlyArray<{ readonly slot: number; readonly guard: RecoveryGuard }>
    > =>
      Effect.gen(function* () {
        const found: Array<{ readonly slot: number; readonly guard: RecoveryGuard }> = []
        for (let slot = 1; slot <= SLOT_COUNT; slot++) {
          const state = yield* readGuard(slot)
          if (state._tag === "valid") found.push({ slot, guard: state.guard })
        }
        return found
      })

    return {
      acquire,
      release,
      holds,
      publishGuard,
      writeGuard,
      removeGuard,
      readGuard,
      validGuards
    } as const
  })
}) {}
