import * as fs from "node:fs"
import { LockPathUnsafe } from "@serverfs/domain"
import type { BridgeSettings } from "@serverfs/policy"
import { Effect } from "effect"

/** The lock directory's modes: private, or readable by the peer group in shared mode. */
export const lockModes = (settings: BridgeSettings) => {
  const shared = settings.peerGid !== null
  return { shared, dirMode: shared ? 0o750 : 0o700, fileMode: shared ? 0o640 : 0o600 } as const
}

export const lockPathUnsafe = (problem: string) =>
  new LockPathUnsafe({ message: `lock directory ${problem}` })

/**
 * Creates (or checks) a directory of the lock tree: a real directory of this uid that nobody
 * else can write, given its mode (and group in shared mode). Messages never carry the path.
 */
export const prepareLockDirectory = (
  dir: string,
  settings: BridgeSettings
): Effect.Effect<void, LockPathUnsafe> =>
  Effect.try({
    try: () => {
      const { shared, dirMode } = lockModes(settings)
      fs.mkdirSync(dir, { recursive: true, mode: dirMode })
      const stat = fs.lstatSync(dir)
      if (!stat.isDirectory() || stat.isSymbolicLink()) throw lockPathUnsafe("is not a directory")
      if (stat.uid !== process.getuid?.()) throw lockPathUnsafe("is owned by another user")
      if ((stat.mode & 0o022) !== 0) throw lockPathUnsafe("is group- or world-writable")
      if (shared && settings.peerGid !== null && stat.gid !== settings.peerGid)
        fs.chownSync(dir, -1, settings.peerGid)
      if ((stat.mode & 0o777) !== dirMode) fs.chmodSync(dir, dirMode)
    },
    catch: (e) => (e instanceof LockPathUnsafe ? e : lockPathUnsafe("cannot be prepared"))
  })
