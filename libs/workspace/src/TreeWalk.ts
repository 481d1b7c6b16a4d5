import { ResourceExhausted } from "@serverfs/domain"
import type { DenyPolicy } from "@serverfs/policy"
import { AT, close, DT, fstat, fstatat, O, openat, type ReaddirResult, readdir } from "@serverfs/posix"
import { compareCodePoints } from "./CodePointOrder.js"
import { entryTypeOfMode } from "./FileKind.js"
import { type At, codeOf } from "./OsError.js"

/**
 * A depth-first walk of a directory tree by descriptors (find_files, tool-contracts §2.3).
 *
 * - children are opened relative to their parent's fd with O_DIRECTORY|O_NOFOLLOW: symlinked
 *   directories are never entered, a directory swapped for a link mid-walk is simply skipped;
 * - hidden, denied and reserved entries are dropped by the workdir policy on their full relative
 *   path, and a denied directory's subtree is never opened;
 * - open descriptors are bounded by the depth of the current branch (a frame keeps its fd only
 *   while its subdirectories are pending), and EMFILE surfaces as RESOURCE_EXHAUSTED;
 * - the walk advances in bounded steps of entries so a caller can yield between them; a large
 *   directory (by its st_size) is not read inline: `step` hands it to the caller to read on the
 *   thread pool and sort in slices (issue 14), then `listed` resumes the walk.
 */
interface Frame<T> {
  readonly fd: number
  readonly relative: string
  readonly subdirectories: string[]
  /** What the visitor said about this directory when it was entered (`WalkVisitor.directory`). */
  readonly tag: T
}

/** A directory the caller must list (readdirAsync) and order before the walk can go on. */
export interface ListingRequest {
  readonly fd: number
}

/**
 * Directories whose st_size is above this are listed off the event loop. Directory sizes grow with
 * their entries on ext4, xfs, btrfs and tmpfs alike (200,000 entries: about 4 MB); small ones are
 * cheaper to read inline than to send to the thread pool.
 */
const LARGE_DIRECTORY_BYTES = 64 * 1024

/** Whether a held directory is large enough to be read on the thread pool (see above). */
export const isLargeDirectory = (fd: number): boolean => {
  try {
    return fstat(fd).size > LARGE_DIRECTORY_BYTES
  } catch {
    return false // the inline read reports whatever is wrong
  }
}

interface Visiting<T> {
  readonly frame: Frame<T>
  readonly listing: ReaddirResult
  readonly order: ReadonlyArray<number>
  next: number
}

/** Entry indices of a listing in code-point order of their names. */
export const orderOf = (names: ReadonlyArray<string>) => (a: number, b: number) =>
  compareCodePoints(names[a]!, names[b]!)

/**
 * What a walk reports to and asks of its caller. `T` is a value the caller keeps per directory
 * (find_files: the path glob's states there), handed back with each of its files.
 */
export interface WalkVisitor<T> {
  /**
   * Called for each policy-visible regular file with its directory's tag; return false to stop
   * the walk.
   */
  readonly file: (relative: string, name: string, directory: T) => boolean
  /**
   * Called before a policy-visible subdirectory is opened, with its parent's tag: its own tag, or
   * undefined to skip it (nothing below it can matter). Without it every directory is entered
   * with its parent's tag. Only the open branch keeps tags, so they cost the depth, not the tree.
   */
  readonly directory?: (name: string, parent: T) => T | undefined
}

export class TreeWalk<T = undefined> {
  private readonly stack: Frame<T>[] = []
  private visited = 0
  /** True when the walk stopped because it reached the entry cap. */
  capped = false
  done = false

  constructor(
    rootFd: number,
    rootRelative: string,
    private readonly policy: DenyPolicy,
    private readonly maxEntries: number,
    private readonly at: At,
    rootTag: T
  ) {
    this.stack.push({ fd: rootFd, relative: rootRelative, subdirectories: [], tag: rootTag })
    this.pendingScan = this.stack[0]!
  }

  /** The frame whose entries have not been read yet (set right after a directory is opened). */
  private pendingScan: Frame<T> | undefined

  /** The listing whose entries are being visited. */
  private visiting: Visiting<T> | undefined

  /**
   * Advance by about `budget` entries. Returns a request when the next directory is large: the
   * caller lists it and calls `listed` (or `listFailed`) before stepping again.
   * @throws ResourceExhausted; or the error that made the walk's root unreadable
   */
  step(visitor: WalkVisitor<T>, budget: number): ListingRequest | undefined {
    let work = 0
    while (work < budget && !this.done) {
      const visiting = this.visiting
      if (visiting !== undefined) {
        while (visiting.next < visiting.order.length && work < budget) {
          work++
          if (!this.visit(visiting, visitor)) {
            this.done = true
            return undefined
          }
        }
        if (visiting.next < visiting.order.length) return undefined
        // Visit subdirectories in name order: pop() takes from the end.
        visiting.frame.subdirectories.reverse()
        this.visiting = undefined
        continue
      }
      const frame = this.pendingScan
      if (frame !== undefined) {
        if (this.isLarge(frame.fd)) return { fd: frame.fd }
        this.pendingScan = undefined
        let listing: ReaddirResult
        try {
          listing = readdir(frame.fd)
        } catch (error) {
          this.failed(frame, error)
          continue
        }
        work += 1 + listing.names.length
        const order = listing.names.map((_, i) => i)
        order.sort(orderOf(listing.names))
        this.visiting = { frame, listing, order, next: 0 }
        continue
      }
      work++
      this.descend(visitor)
    }
    return undefined
  }

  /** The requested directory's listing and its entries' order (see `orderOf`). */
  listed(listing: ReaddirResult, order: ReadonlyArray<number>): void {
    const frame = this.pendingScan!
    this.pendingScan = undefined
    this.visiting = { frame, listing, order, next: 0 }
  }

  /**
   * The requested directory could not be listed.
   * @throws ResourceExhausted; or `error` when it is the walk's root
   */
  listFailed(error: unknown): void {
    const frame = this.pendingScan!
    this.pendingScan = undefined
    this.failed(frame, error)
  }

  private isLarge(fd: number): boolean {
    return isLargeDirectory(fd)
  }

  private failed(frame: Frame<T>, error: unknown): void {
    this.exhausted(error)
    // The root is what the caller asked for: its failure is reported (ACCESS_DENIED), never
    // an empty result. An unreadable directory below it contributes nothing.
    if (frame === this.stack[0]) throw error
  }

  /** One entry of the listing being visited; false stops the walk. */
  private visit(visiting: Visiting<T>, visitor: WalkVisitor<T>): boolean {
    const i = visiting.order[visiting.next++]!
    const { frame, listing } = visiting
    if (++this.visited > this.maxEntries) {
      this.capped = true
      return false
    }
    const name = listing.names[i]!
    if (this.policy.checkChild(frame.relative, name) !== "allowed") return true
    let type = listing.types[i]!
    if (type === DT.UNKNOWN) type = this.lookupType(frame.fd, name)
    const relative = frame.relative === "" ? name : `${frame.relative}/${name}`
    if (type === DT.REG) return visitor.file(relative, name, frame.tag)
    if (type === DT.DIR) frame.subdirectories.push(name)
    return true
  }

  private lookupType(fd: number, name: string): number {
    try {
      const type = entryTypeOfMode(fstatat(fd, name, AT.SYMLINK_NOFOLLOW).mode)
      return type === "file" ? DT.REG : type === "directory" ? DT.DIR : DT.LNK
    } catch {
      return DT.LNK // vanished: treat as nothing to visit
    }
  }

  /** Open the next pending subdirectory (or unwind finished frames). */
  private descend(visitor: WalkVisitor<T>): void {
    while (this.stack.length > 0) {
      const top = this.stack[this.stack.length - 1]!
      const name = top.subdirectories.pop()
      if (name === undefined) {
        this.stack.pop()
        // The root fd belongs to the caller; every other frame's fd is ours.
        if (this.stack.length > 0) close(top.fd)
        continue
      }
      let tag = top.tag
      if (visitor.directory !== undefined) {
        const own = visitor.directory(name, top.tag)
        if (own === undefined) continue // nothing below it can matter: never opened
        tag = own
      }
      let fd: number
      try {
        fd = openat(top.fd, name, O.PATH | O.DIRECTORY | O.NOFOLLOW)
      } catch (error) {
        this.exhausted(error)
        continue // raced into a symlink, removed, or unreadable: skip it
      }
      const frame = {
        fd,
        relative: top.relative === "" ? name : `${top.relative}/${name}`,
        subdirectories: [],
        tag
      }
      this.stack.push(frame)
      this.pendingScan = frame
      return
    }
    this.done = true
  }

  private exhausted(error: unknown): void {
    const code = codeOf(error)
    if (code === "EMFILE" || code === "ENFILE") throw new ResourceExhausted(this.at)
  }

  /** Close every descriptor the walk opened (the root fd is the caller's). */
  close(): void {
    for (let i = this.stack.length - 1; i > 0; i--) close(this.stack[i]!.fd)
    this.stack.length = 0
  }
}
