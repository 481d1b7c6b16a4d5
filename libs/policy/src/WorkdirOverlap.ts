import * as fs from "node:fs"
import * as path from "node:path"
import { ConfigurationError } from "./ConfigurationError.js"
import { slotId, type Workdir } from "./Workdir.js"

/**
 * Where a workdir's directory sits in the filesystem, by identity rather than by name: the
 * `dev:ino` of the directory and of each parent up to the filesystem root. Two workdirs whose
 * chains meet are the same directory or nested, whatever names (symbolic links on the way, bind
 * mounts, a repeated path) the administrator used. Each workdir is its own lease, read-only
 * switch and policy; overlapping ones would let a write through one alias bypass the other's.
 */
export interface DirectoryLocation {
  readonly chain: ReadonlyArray<string>
  /** The process's `/`, also when reached through another name (a bind mount of `/`). */
  readonly isFilesystemRoot: boolean
  /**
   * The directory as a path inside its filesystem (from /proc/self/mountinfo), when known. The
   * walk up cannot see that a bind mount of a *subdirectory* of one workdir is another workdir
   * (`..` at a mount root leads to the mount point's parent); the filesystem path can.
   */
  readonly inFilesystem?: { readonly device: string; readonly path: string }
}

export type LocateDirectory = (hostPath: string) => DirectoryLocation | undefined

const identity = (p: string): string => {
  const stat = fs.statSync(p, { bigint: true })
  return `${stat.dev}:${stat.ino}`
}

interface MountEntry {
  readonly device: string
  readonly root: string
  readonly mountPoint: string
}

/** mountinfo escapes space, tab, newline and backslash as three octal digits. */
const unescapeMountPath = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))

const readMounts = (): ReadonlyArray<MountEntry> => {
  let text: string
  try {
    text = fs.readFileSync("/proc/self/mountinfo", "utf8")
  } catch {
    return []
  }
  const mounts: MountEntry[] = []
  for (const line of text.split("\n")) {
    // id parent major:minor root mount-point options ... - type source super-options
    const fields = line.split(" ")
    if (fields.length < 5) continue
    mounts.push({
      device: fields[2]!,
      root: unescapeMountPath(fields[3]!),
      mountPoint: unescapeMountPath(fields[4]!)
    })
  }
  return mounts
}

const isWithin = (inner: string, outer: string): boolean =>
  inner === outer || outer === "/" || inner.startsWith(`${outer}/`)

/** `major:minor` of a Linux dev_t, as mountinfo writes it. */
const majorMinor = (dev: bigint): string => {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn)
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn)
  return `${major}:${minor}`
}

/**
 * The mount `real` is on, and its path inside that filesystem: among the mounts whose mount point
 * is `real` or one of its parents, those of `real`'s own device, then the deepest, then the last
 * listed. Some filesystems (btrfs subvolumes) report another device to stat than to mountinfo:
 * then the device filter is skipped. Not exact when a parent was mounted over a deeper mount of
 * the same filesystem later (the hidden deeper one is picked); the device-and-inode walk does
 * not depend on this and still catches the same directory and every ancestor.
 */
const inFilesystem = (
  real: string,
  dev: bigint,
  mounts: ReadonlyArray<MountEntry>
): DirectoryLocation["inFilesystem"] => {
  const candidates = mounts.filter((m) => isWithin(real, m.mountPoint))
  const own = candidates.filter((m) => m.device === majorMinor(dev))
  let best: MountEntry | undefined
  for (const m of own.length > 0 ? own : candidates) {
    if (best === undefined || m.mountPoint.length >= best.mountPoint.length) best = m
  }
  if (best === undefined) return undefined
  const rest = best.mountPoint === "/" ? real : real.slice(best.mountPoint.length)
  return { device: best.device, path: path.posix.join(best.root, rest) }
}

/**
 * Checked once at startup on paths the administrator owns. realpath resolves every symbolic
 * link, so the parents of the result are the physical parents; the walk is one stat per path
 * segment. Undefined when something on the way cannot be inspected.
 */
export const locateDirectory: LocateDirectory = (hostPath) => {
  try {
    const real = fs.realpathSync.native(hostPath)
    let current = real
    const chain: string[] = []
    for (;;) {
      chain.push(identity(current))
      const parent = path.dirname(current)
      if (parent === current) break
      current = parent
    }
    const location = inFilesystem(real, fs.statSync(real, { bigint: true }).dev, readMounts())
    return {
      chain,
      isFilesystemRoot: chain[0] === identity("/"),
      ...(location === undefined ? {} : { inFilesystem: location })
    }
  } catch {
    return undefined
  }
}

/** How `here` relates to `there`, by identity first and by filesystem path second. */
const relationOf = (here: DirectoryLocation, there: DirectoryLocation): string | undefined => {
  const [self, other] = [here.chain[0], there.chain[0]]
  if (self === other) return "is the same directory as"
  if (other !== undefined && here.chain.includes(other)) return "is inside"
  if (self !== undefined && there.chain.includes(self)) return "contains"
  const [a, b] = [here.inFilesystem, there.inFilesystem]
  if (a === undefined || b === undefined || a.device !== b.device) return undefined
  if (a.path === b.path) return "is the same directory as"
  if (isWithin(a.path, b.path)) return "is inside"
  if (isWithin(b.path, a.path)) return "contains"
  return undefined
}

/** Read-only with Agent delegation disabled: nothing can change it through this alias. */
const confined = (w: Workdir): boolean => w.readOnly && w.agentMode === "disabled"

const RULE = "overlapping workdirs must all be read-only with Agent delegation disabled"

/**
 * The first overlap that is not allowed, in slot order. An overlap is allowed only when every
 * workdir involved is confined; the filesystem root overlaps everything, ServerFS's own state and
 * configuration included, so it must be confined even alone. Messages name variables and
 * aliases, never host paths.
 */
export const workdirOverlapProblem = (
  workdirs: ReadonlyArray<{ readonly workdir: Workdir; readonly location: DirectoryLocation }>
): ConfigurationError | undefined => {
  const pathVar = (w: Workdir) => `WORKDIR_${slotId(w.slot)}_PATH`
  const named = (w: Workdir) => `${pathVar(w)} (workdir "${w.alias}")`
  for (const [i, { workdir: w, location: here }] of workdirs.entries()) {
    if (here.isFilesystemRoot && !confined(w)) {
      return new ConfigurationError({
        variable: pathVar(w),
        problem:
          "is the filesystem root, which holds every other directory; it must be read-only with Agent delegation disabled"
      })
    }
    for (const { workdir: earlier, location: there } of workdirs.slice(0, i)) {
      if (confined(w) && confined(earlier)) continue
      const relation = relationOf(here, there)
      if (relation !== undefined) {
        return new ConfigurationError({
          variable: pathVar(w),
          problem: `${relation} ${named(earlier)}; ${RULE}`
        })
      }
    }
  }
  return undefined
}

/**
 * Where a directory that may not exist yet would be: its nearest existing ancestor, found by
 * taking off one name at a time. The names are not normalized first: `a/link/../new` is
 * inspected as the kernel resolves `a/link/..`, not as the string `a`. Undefined when even `/`
 * cannot be inspected.
 */
const locateNearest = (
  hostPath: string,
  locate: LocateDirectory
): { readonly location: DirectoryLocation; readonly exists: boolean } | undefined => {
  let current = hostPath
  for (;;) {
    const location = locate(current)
    if (location !== undefined) return { location, exists: current === hostPath }
    const parent = path.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

/**
 * A directory the bridge keeps its own files in (locks and recovery guards, its state, its
 * socket) must not be inside any workdir, nor be one: through a read-write workdir a model could
 * delete a recovery guard or a lock file, replace the socket, or rewrite the task store; through
 * a read-only one it could read task results. Compared like workdir overlaps, by device and inode
 * (then by filesystem path, for bind mounts); a directory not created yet is judged by its
 * nearest existing ancestor, since it will be created there. A workdir that is the filesystem
 * root is left out: the overlap rule already confines it, knowing it holds everything. The
 * message names the two variables, never a path.
 */
export const runtimeDirectoryProblem = (
  directories: ReadonlyArray<{ readonly variable: string; readonly hostPath: string }>,
  workdirs: ReadonlyArray<Workdir>,
  locate: LocateDirectory = locateDirectory
): ConfigurationError | undefined => {
  const located: Array<{ readonly workdir: Workdir; readonly location: DirectoryLocation }> = []
  for (const workdir of workdirs) {
    const location = locate(workdir.hostPath)
    if (location === undefined) {
      return new ConfigurationError({
        variable: `WORKDIR_${slotId(workdir.slot)}_PATH`,
        problem: "cannot be inspected"
      })
    }
    if (!location.isFilesystemRoot) located.push({ workdir, location })
  }
  if (located.length === 0) return undefined
  for (const { variable, hostPath } of directories) {
    const nearest = locateNearest(hostPath, locate)
    if (nearest === undefined) return new ConfigurationError({ variable, problem: "cannot be inspected" })
    for (const { workdir, location } of located) {
      const relation = relationOf(nearest.location, location)
      if (relation === "is the same directory as" || relation === "is inside") {
        const how = relation === "is the same directory as" && nearest.exists ? relation : "is inside"
        return new ConfigurationError({
          variable,
          problem: `${how} WORKDIR_${slotId(workdir.slot)}_PATH (workdir "${workdir.alias}"); the Agent Bridge's lock, state and socket directories must be outside every workdir`
        })
      }
    }
  }
  return undefined
}
