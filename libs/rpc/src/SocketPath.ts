import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { SocketDirectoryUnsafe, SocketPathInUse } from "@serverfs/domain"
import {
  AT,
  fstatat,
  isPosixError,
  linkat,
  openPrivateDirectory,
  type PrivateDirectoryProblem,
  RENAME,
  renameat2,
  S,
  type Stat,
  unlinkat
} from "@serverfs/posix"
import { Duration, Effect, type Scope } from "effect"
import { connectUnix } from "./UnixConnection.js"

/**
 * Socket-path safety (bridge-internals §1.2). Everything after the directory check is done
 * relative to the held directory fd — through `/proc/self/fd/<fd>/<name>` where Node needs a
 * path — so swapping the directory afterwards cannot redirect the bind, the stale-socket
 * removal or the unlink on close. Messages name no host path, uid or inode.
 *
 * - The directory is created if missing and set to 0700, or 0750 in shared mode (an existing,
 *   otherwise safe directory of the bridge user is brought to that mode); it must be a real
 *   directory (not a symlink) owned by the server's uid and not group- or world-writable; in
 *   shared mode its group becomes the shared gid. Otherwise SOCKET_DIRECTORY_UNSAFE.
 * - An existing entry at the socket name that is a symlink, not a socket, or owned by someone
 *   else is left untouched: SOCKET_PATH_IN_USE. A socket that accepts a connection within
 *   0.5 s (or does not answer either way) is live: SOCKET_PATH_IN_USE. A socket refusing
 *   connections (ECONNREFUSED) is stale and is removed only if its dev/ino are still those
 *   inspected.
 * - The server binds a random hidden name in the directory, gets its mode (0600, or 0660 and
 *   the shared group) before anyone can reach it by the public name, and is then renamed onto
 *   the socket name without replacing anything (renameat2 RENAME_NOREPLACE): whoever wins a
 *   race for the name, nothing is clobbered. Binding a throwaway name also keeps libuv's own
 *   unlink-on-close (which unlinks the bound path whatever is there) away from the public name.
 * - On close the socket name is unlinked only if it is still the inode this server published.
 */
export interface SocketLocation {
  readonly dirFd: number
  readonly name: string
}

export interface SocketIdentity {
  readonly dev: bigint
  readonly ino: bigint
}

/** sun_path holds 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107
const LIVENESS_PROBE = Duration.millis(500)

export const procPath = (location: SocketLocation, name: string): string =>
  `/proc/self/fd/${location.dirFd}/${name}`

const euid = (): number => process.geteuid?.() ?? -1
const codeOf = (error: unknown): string | undefined => (isPosixError(error) ? error.code : undefined)
const isType = (stat: Stat, type: number): boolean => (stat.mode & S.IFMT) === type
const unsafe = (message: string) => new SocketDirectoryUnsafe({ message })
const inUse = (message: string) => new SocketPathInUse({ message })

/**
 * The socket's name in its directory, or why the path cannot be a socket path (not absolute, not
 * normalized, too long for sun_path). Exported so `serverfs doctor` applies the very same rule.
 */
export const socketName = (socketPath: string): Effect.Effect<string, SocketDirectoryUnsafe> => {
  if (!path.isAbsolute(socketPath)) return unsafe("the socket path must be absolute")
  if (path.resolve(socketPath) !== socketPath || socketPath === "/") {
    return unsafe("the socket path must be a normalized path naming a file")
  }
  if (Buffer.byteLength(socketPath, "utf8") > MAX_SOCKET_PATH_BYTES) {
    return unsafe(`the socket path is longer than ${MAX_SOCKET_PATH_BYTES} bytes`)
  }
  return Effect.succeed(path.basename(socketPath))
}

const SOCKET_DIRECTORY_PHRASES: Readonly<Record<PrivateDirectoryProblem, string>> = {
  "not-absolute": "the socket path must be absolute",
  missing: "the socket directory cannot be created",
  symlink: "the socket directory is not a real directory",
  "not-a-directory": "the socket directory is not a real directory",
  changed: "the socket directory is not a real directory",
  "foreign-owner": "the socket directory is not owned by the bridge user",
  "writable-by-others": "the socket directory is group- or world-writable",
  "wrong-mode": "the socket directory cannot be checked",
  "cannot-create": "the socket directory cannot be created",
  "cannot-inspect": "the socket directory cannot be opened",
  "cannot-set-mode": "the socket directory cannot be checked",
  "cannot-set-group": "the socket directory's group cannot be set to the shared group"
}

/** The checked socket directory, held open for the scope. */
export const openSocketDirectory = (
  socketPath: string,
  sharedGid: number | undefined
): Effect.Effect<SocketLocation, SocketDirectoryUnsafe, Scope.Scope> =>
  Effect.gen(function* () {
    const name = yield* socketName(socketPath)
    // The group- or world-writable directory is refused, never repaired; the bridge's own
    // directory is otherwise brought to the mode of the configured sharing (0700, or 0750 so the
    // peer group can reach the socket): switching to shared mode must not leave the peer locked
    // out, and switching back must not leave the directory open to the group.
    const directory = yield* openPrivateDirectory(path.dirname(socketPath), {
      mode: sharedGid === undefined ? 0o700 : 0o750,
      existing: "conform",
      group: sharedGid,
      parents: true
    }).pipe(Effect.mapError((refused) => unsafe(SOCKET_DIRECTORY_PHRASES[refused.problem])))
    return { dirFd: directory.fd, name }
  })

/**
 * A synchronous step that refuses by throwing SocketPathInUse (every OS failure it expects is
 * mapped to one where it happens). Anything else it throws is a bug: a defect, never relabelled
 * as SOCKET_PATH_IN_USE.
 */
const refusing = <A>(step: () => A): Effect.Effect<A, SocketPathInUse> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(step())
    } catch (error) {
      if (error instanceof SocketPathInUse) return Effect.fail(error)
      // Thrown inside `suspend`: the fiber dies with it.
      throw error
    }
  })

/** The existing socket at the name, undefined if there is none; anything else is refused. */
const inspectExisting = (location: SocketLocation): Stat | undefined => {
  let found: Stat
  try {
    found = fstatat(location.dirFd, location.name, AT.SYMLINK_NOFOLLOW)
  } catch (error) {
    if (codeOf(error) === "ENOENT") return undefined
    throw inUse("the socket path cannot be inspected")
  }
  if (!isType(found, S.IFSOCK)) throw inUse("the socket path exists and is not a socket")
  if (found.uid !== euid()) throw inUse("the socket path is a socket of another user")
  return found
}

const sameFile = (a: SocketIdentity, b: SocketIdentity): boolean => a.dev === b.dev && a.ino === b.ino

const removeStale = (location: SocketLocation, inspected: Stat): void => {
  let now: Stat
  try {
    now = fstatat(location.dirFd, location.name, AT.SYMLINK_NOFOLLOW)
  } catch (error) {
    if (codeOf(error) === "ENOENT") return
    throw inUse("the socket path cannot be inspected")
  }
  if (!sameFile(now, inspected)) throw inUse("the socket path changed while it was being inspected")
  try {
    unlinkat(location.dirFd, location.name, 0)
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw inUse("the stale socket cannot be removed")
  }
}

type Liveness = "live" | "refused" | "gone" | "unknown"

/** Does something accept connections on the socket? Bounded to 0.5 s; no answer counts as live. */
const probe = (target: string): Effect.Effect<Liveness> =>
  connectUnix(target).pipe(
    Effect.flatMap((socket) =>
      Effect.async<Liveness>((resume) => {
        socket.once("connect", () => resume(Effect.succeed("live")))
        socket.once("error", (error: NodeJS.ErrnoException) =>
          resume(
            Effect.succeed(
              error.code === "ECONNREFUSED" ? "refused" : error.code === "ENOENT" ? "gone" : "unknown"
            )
          )
        )
      })
    ),
    Effect.scoped,
    Effect.timeoutTo({
      duration: LIVENESS_PROBE,
      onSuccess: (liveness) => liveness,
      onTimeout: () => "unknown"
    })
  )

/** Make the socket name free: nothing there, or a stale socket of ours that was removed. */
export const clearSocketPath = (location: SocketLocation): Effect.Effect<void, SocketPathInUse> =>
  Effect.gen(function* () {
    const inspected = yield* refusing(() => inspectExisting(location))
    if (inspected === undefined) return
    const liveness = yield* probe(procPath(location, location.name))
    if (liveness === "gone") return
    if (liveness !== "refused") return yield* inUse("another server is listening on the socket path")
    yield* refusing(() => removeStale(location, inspected))
  })

/** A fresh hidden name to bind before publishing. */
export const bindingName = (): string => `.rpc-${randomBytes(8).toString("hex")}.binding`

const publishSync = (
  location: SocketLocation,
  bound: string,
  sharedGid: number | undefined
): SocketIdentity => {
  let stat: Stat
  try {
    stat = fstatat(location.dirFd, bound, AT.SYMLINK_NOFOLLOW)
  } catch {
    throw inUse("the bound socket cannot be inspected")
  }
  if (!isType(stat, S.IFSOCK) || stat.uid !== euid())
    throw inUse("the bound socket is not the one just created")
  const target = procPath(location, bound)
  try {
    fs.chmodSync(target, sharedGid === undefined ? 0o600 : 0o660)
    if (sharedGid !== undefined) fs.chownSync(target, -1, sharedGid)
  } catch {
    throw inUse("the socket's permissions cannot be set")
  }
  try {
    renameat2(location.dirFd, bound, location.dirFd, location.name, RENAME.NOREPLACE)
  } catch (error) {
    const code = codeOf(error)
    if (code === "EEXIST") throw inUse("the socket path was taken while the socket was being bound")
    if (code !== "EINVAL" && code !== "ENOSYS") throw inUse("the socket cannot be published")
    // A filesystem without RENAME_NOREPLACE: link (which never replaces) and drop the old name.
    try {
      linkat(location.dirFd, bound, location.dirFd, location.name, 0)
    } catch (linkError) {
      throw inUse(
        codeOf(linkError) === "EEXIST"
          ? "the socket path was taken while the socket was being bound"
          : "the socket cannot be published"
      )
    }
    try {
      unlinkat(location.dirFd, bound, 0)
    } catch {
      throw inUse("the socket cannot be published")
    }
  }
  return { dev: stat.dev, ino: stat.ino }
}

/**
 * Give the socket bound at `bound` its mode (and shared group), then move it onto the socket
 * name without replacing anything. Returns the identity to compare against on close.
 */
export const publishSocket = (
  location: SocketLocation,
  bound: string,
  sharedGid: number | undefined
): Effect.Effect<SocketIdentity, SocketPathInUse> => refusing(() => publishSync(location, bound, sharedGid))

/** Unlink the socket name only if it is still the socket this server published. */
export const unlinkIfSame = (location: SocketLocation, identity: SocketIdentity): void => {
  try {
    const now = fstatat(location.dirFd, location.name, AT.SYMLINK_NOFOLLOW)
    if (isType(now, S.IFSOCK) && sameFile(now, identity)) unlinkat(location.dirFd, location.name, 0)
  } catch {
    // Already gone, or the directory is unreadable now: nothing of ours to remove.
  }
}
