import * as path from "node:path"
import { LockPathUnsafe, StateDirectoryUnsafe } from "@serverfs/domain"
import { Configuration } from "@serverfs/policy"
import { AT, close } from "@serverfs/posix"
import { checkStateDirectory } from "@serverfs/store"
import {
  type LockFileProblem,
  LockFileRefused,
  lockExclusiveSync,
  lockModes,
  openLockFileSync,
  prepareLockDirectory
} from "@serverfs/workspace"
import { Effect, Layer, Option } from "effect"
import { BridgeSettingsTag } from "./BridgeSettingsTag.js"

/**
 * One bridge per state directory and per lock directory (issue 14). Without it a second bridge
 * started on another socket but the same directories reconciled the first one's live tasks as
 * left by a dead process — marking them interrupted and deleting their recovery guards, so a
 * crash of the first bridge then left its workdir writable while its provider still ran.
 *
 * Before anything reads or writes state (migrations, reconciliation, guard cleanup, the socket),
 * the bridge takes `flock(LOCK_EX|LOCK_NB)` on `bridge.lock` in the state directory and in the
 * lock directory, and holds both for its lifetime (the kernel drops them when the process dies,
 * however it dies: no stale lock to clean up). A second bridge on either directory stops with
 * one line and exit 1, having created nothing but the directories' own check.
 *
 * The lock files are 0600 in both directories, also in shared mode: a peer of the group can read
 * the lock directory but cannot open `bridge.lock`, so it cannot hold it to keep the bridge down.
 */
export const INSTANCE_LOCK_FILE = "bridge.lock"

interface Held {
  readonly fd: number
  readonly dev: bigint
  readonly ino: bigint
}

const INSTANCE_LOCK_PHRASES: Readonly<Record<Exclude<LockFileProblem, "busy">, string>> = {
  "cannot-open": "cannot be opened",
  "not-a-regular-file": "is not a private regular file",
  "hard-linked": "is not a private regular file",
  "foreign-owner": "is not a private regular file",
  "cannot-set-mode": "is not a private regular file",
  "cannot-lock": "cannot be taken"
}

/**
 * Open (creating 0600) and lock `<dir>/bridge.lock`, through the one lock-file open of the
 * lease. `already` is the lock this process holds in the other directory: when both settings
 * name one directory it is the same file, and a second flock on a new descriptor would
 * conflict with our own.
 */
const lockIn = <E>(
  dir: string,
  what: string,
  already: Option.Option<Held>,
  error: (message: string) => E
): Effect.Effect<Option.Option<Held>, E> =>
  Effect.suspend(() => {
    const refusal = (refused: LockFileRefused) =>
      Effect.fail(
        error(
          refused.problem === "busy"
            ? `another serverfs-bridge is running on this ${what}`
            : `the ${what}'s instance lock ${INSTANCE_LOCK_PHRASES[refused.problem]}`
        )
      )
    const opened = openLockFileSync(AT.FDCWD, path.join(dir, INSTANCE_LOCK_FILE), { create: { mode: 0o600 } })
    if (opened instanceof LockFileRefused) return refusal(opened)
    const { fd, stat } = opened
    if (Option.isSome(already) && already.value.dev === stat.dev && already.value.ino === stat.ino) {
      close(fd)
      return Effect.succeedNone
    }
    const notLocked = lockExclusiveSync(fd)
    if (notLocked === undefined) return Effect.succeedSome({ fd, dev: stat.dev, ino: stat.ino })
    close(fd)
    return refusal(notLocked)
  })

const release = (held: Option.Option<Held>) => Effect.sync(() => Option.map(held, ({ fd }) => close(fd)))

/** Held for the layer's scope: build it before any layer that touches the state or the locks. */
export const InstanceLockLive: Layer.Layer<
  never,
  StateDirectoryUnsafe | LockPathUnsafe,
  Configuration | BridgeSettingsTag
> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const { global } = yield* Configuration
    const settings = yield* BridgeSettingsTag
    yield* checkStateDirectory(settings.stateDir)
    const state = yield* Effect.acquireRelease(
      lockIn(
        settings.stateDir,
        "state directory",
        Option.none(),
        (message) => new StateDirectoryUnsafe({ message })
      ),
      release
    )
    yield* prepareLockDirectory(global.agentLockDir, lockModes(settings.peerGid))
    yield* Effect.acquireRelease(
      lockIn(global.agentLockDir, "lock directory", state, (message) => new LockPathUnsafe({ message })),
      release
    )
  })
)
