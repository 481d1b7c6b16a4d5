import * as fs from "node:fs"
import * as path from "node:path"
import type { BridgeSettings, GlobalSettings } from "@serverfs/policy"
import { socketName } from "@serverfs/rpc"
import { Effect } from "effect"
import { type CheckResult, fail, lstatOf, ownUid, pass, skip, warn } from "./Check.js"

/**
 * The bridge's own directories, inspected read-only (doctor never creates, chmods or removes):
 * the socket directory by the rules the bridge applies when it binds (libs/rpc/src/SocketPath.ts),
 * the lock directory (libs/workspace/src/lease/LockDirectory.ts: 0700, or 0750 with the peer
 * group) and the state directory (libs/store/src/StateDirectory.ts: exactly 0700), then the free
 * space under the state directory, where results are spooled.
 */

const GIB = 1024 ** 3
const MIB = 1024 ** 2
/** Below this the spool FAILs: a single maximal result (8 MiB) and the events of a few tasks. */
export const DISK_FAIL_BYTES = 100 * MIB

const notOwned = (what: string, variable: string): CheckResult =>
  warn(
    what,
    "owned by another user than the one running doctor",
    `run doctor as the user serverfs-bridge runs as; the bridge refuses a ${variable} owned by anyone else`
  )

/** The directory and the entry at the name, once the path itself is acceptable. */
const socketDirectoryCheck = (socket: string, peerGid: number | null): CheckResult => {
  const name = "socket path"
  const directory = lstatOf(path.dirname(socket))
  if (directory === "missing")
    return warn(
      name,
      "the socket directory does not exist yet",
      "start serverfs-bridge: it creates it (0700)"
    )
  if (typeof directory === "string")
    return fail(
      name,
      `the socket directory cannot be inspected (${directory})`,
      "check the permissions of its parents"
    )
  if (directory.isSymbolicLink() || !directory.isDirectory())
    return fail(
      name,
      "the socket directory is not a real directory (a symbolic link or a file)",
      "point SERVERFS_AGENT_BRIDGE_SOCKET into a real directory owned by the bridge's user"
    )
  if ((directory.mode & 0o022) !== 0)
    return fail(
      name,
      "the socket directory is group- or world-writable: another user could replace the socket",
      `chmod ${peerGid === null ? "0700" : "0750"} the directory of SERVERFS_AGENT_BRIDGE_SOCKET (the bridge refuses to bind there)`
    )
  const uid = ownUid()
  if (uid !== undefined && directory.uid !== uid) return notOwned(name, "socket directory")
  const entry = lstatOf(socket)
  if (entry !== "missing" && typeof entry !== "string" && !entry.isSocket())
    return fail(
      name,
      "something that is not a socket (a file or a symbolic link) holds the socket name",
      "remove it: the bridge will not replace it (SOCKET_PATH_IN_USE)"
    )
  return pass(name, "absolute, short enough; directory private and not writable by others")
}

/** The path by the bridge's own rule (libs/rpc socketName), then its directory and entry. */
export const socketPathCheck = (global: GlobalSettings, peerGid: number | null): Effect.Effect<CheckResult> =>
  Effect.match(socketName(global.agentBridgeSocket), {
    onFailure: (refused) =>
      fail(
        "socket path",
        `SERVERFS_AGENT_BRIDGE_SOCKET: ${refused.message}`,
        "set SERVERFS_AGENT_BRIDGE_SOCKET to an absolute, normalized path of at most 107 bytes"
      ),
    onSuccess: () => socketDirectoryCheck(global.agentBridgeSocket, peerGid)
  })

/** The lock or state directory: exists, real, owned by us, permissions no looser than the bridge's. */
const privateDirectory = (
  name: string,
  variable: string,
  target: string,
  allowedGroup: number | null,
  exactPrivate: boolean
): CheckResult => {
  const stat = lstatOf(target)
  if (stat === "missing")
    return fail(
      name,
      `${variable} does not exist`,
      `start serverfs-bridge once (it creates it), or mkdir -m 0700 it as the bridge's user`
    )
  if (typeof stat === "string")
    return fail(name, `${variable} cannot be inspected (${stat})`, "check the permissions of its parents")
  if (stat.isSymbolicLink())
    return fail(
      name,
      `${variable} is a symbolic link`,
      `replace it by a real directory (the bridge refuses a link)`
    )
  if (!stat.isDirectory()) return fail(name, `${variable} is not a directory`, `replace it by a directory`)
  const worldWritable = (stat.mode & 0o002) !== 0
  const groupWritable = (stat.mode & 0o020) !== 0 && (allowedGroup === null || stat.gid !== allowedGroup)
  if (worldWritable || groupWritable)
    return fail(
      name,
      `${variable} is ${worldWritable ? "world" : "group"}-writable`,
      `chmod ${allowedGroup === null ? "0700" : "0750"} it: anyone who can write there can tamper with the bridge's files`
    )
  if (exactPrivate && (stat.mode & 0o077) !== 0)
    return fail(
      name,
      `${variable} is readable by others`,
      "chmod 0700 it (the bridge refuses anything looser)"
    )
  const uid = ownUid()
  if (uid !== undefined && stat.uid !== uid) return notOwned(name, variable)
  try {
    fs.accessSync(target, fs.constants.W_OK | fs.constants.X_OK)
  } catch {
    return fail(name, `${variable} is not writable by this user`, "make it writable by the bridge's user")
  }
  return pass(name, "a private directory, writable")
}

export const lockDirectoryCheck = (global: GlobalSettings, bridge: BridgeSettings): CheckResult =>
  privateDirectory("lock directory", "SERVERFS_AGENT_LOCK_DIR", global.agentLockDir, bridge.peerGid, false)

export const stateDirectoryCheck = (bridge: BridgeSettings): CheckResult =>
  privateDirectory("state directory", "SERVERFS_AGENT_BRIDGE_STATE_DIR", bridge.stateDir, null, true)

const formatBytes = (n: number): string =>
  n >= GIB ? `${(n / GIB).toFixed(1)} GiB` : `${Math.floor(n / MIB)} MiB`

/**
 * Free space for the spool (statfs of the state directory, as this user may use it): FAIL under
 * 100 MiB; WARN under the larger of 1 GiB and SERVERFS_AGENT_STATE_MAX_BYTES, the disk budget
 * the bridge assumes it may fill.
 */
export const diskSpaceCheck = (bridge: BridgeSettings): CheckResult => {
  const name = "disk space"
  let stats: fs.StatsFs
  try {
    stats = fs.statfsSync(bridge.stateDir)
  } catch {
    return skip(name, "the state directory cannot be inspected (see above)")
  }
  const free = stats.bavail * stats.bsize
  const wanted = Math.max(GIB, bridge.stateMaxBytes)
  if (free < DISK_FAIL_BYTES)
    return fail(
      name,
      `${formatBytes(free)} free for the spool (under 100 MiB)`,
      "free space on the state directory's filesystem; results and events will fail to be stored"
    )
  if (free < wanted)
    return warn(
      name,
      `${formatBytes(free)} free for the spool, less than ${formatBytes(wanted)} (SERVERFS_AGENT_STATE_MAX_BYTES or 1 GiB)`,
      "free space there, or lower SERVERFS_AGENT_STATE_MAX_BYTES to what the disk can hold"
    )
  return pass(name, `${formatBytes(free)} free for the spool`)
}
