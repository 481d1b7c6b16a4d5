import { ResourceExhausted } from "@serverfs/domain"
import type { DenyPolicy } from "@serverfs/policy"
import { AT, close, DT, fstatat, O, openat, readdir } from "@serverfs/posix"
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
 * - the walk advances in bounded steps so a caller can yield between them.
 */
interface Frame {
  readonly fd: number
  readonly relative: string
  readonly subdirectories: string[]
}

export interface WalkVisitor {
  /** Called for each policy-visible regular file; return false to stop the walk. */
  readonly file: (relative: string, name: string) => boolean
}

export class TreeWalk {
  private readonly stack: Frame[] = []
  private visited = 0
  /** True when the walk stopped because it reached the entry cap. */
  capped = false
  done = false

  constructor(
    rootFd: number,
    rootRelative: string,
    private readonly policy: DenyPolicy,
    private readonly maxEntries: number,
    private readonly at: At
  ) {
    this.stack.push({ fd: rootFd, relative: rootRelative, subdirectories: [] })
    this.pendingScan = this.stack[0]!
  }

  /** The frame whose entries have not been read yet (set right after a directory is opened). */
  private pendingScan: Frame | undefined

  /**
   * Advance by up to `budget` directories.
   * @throws ResourceExhausted; or the error that made the walk's root unreadable
   */
  step(visitor: WalkVisitor, budget: number): void {
    for (let n = 0; n < budget && !this.done; n++) {
      if (this.pendingScan !== undefined) {
        const frame = this.pendingScan
        this.pendingScan = undefined
        if (!this.scan(frame, visitor)) {
          this.done = true
          return
        }
      }
      this.descend()
    }
  }

  private scan(frame: Frame, visitor: WalkVisitor): boolean {
    let listing: ReturnType<typeof readdir>
    try {
      listing = readdir(frame.fd)
    } catch (error) {
      this.exhausted(error)
      // The root is what the caller asked for: its failure is reported (ACCESS_DENIED), never
      // an empty result. An unreadable directory below it contributes nothing.
      if (frame === this.stack[0]) throw error
      return true
    }
    const order = listing.names.map((_, i) => i)
    order.sort((a, b) => compareCodePoints(listing.names[a]!, listing.names[b]!))
    for (const i of order) {
      if (++this.visited > this.maxEntries) {
        this.capped = true
        return false
      }
      const name = listing.names[i]!
      if (this.policy.checkChild(frame.relative, name) !== "allowed") continue
      let type = listing.types[i]!
      if (type === DT.UNKNOWN) type = this.lookupType(frame.fd, name)
      const relative = frame.relative === "" ? name : `${frame.relative}/${name}`
      if (type === DT.REG) {
        if (!visitor.file(relative, name)) return false
      } else if (type === DT.DIR) {
        frame.subdirectories.push(name)
      }
    }
    // Visit subdirectories in name order: pop() takes from the end.
    frame.subdirectories.reverse()
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
  private descend(): void {
    while (this.stack.length > 0) {
      const top = this.stack[this.stack.length - 1]!
      const name = top.subdirectories.pop()
      if (name === undefined) {
        this.stack.pop()
        // The root fd belongs to the caller; every other frame's fd is ours.
        if (this.stack.length > 0) close(top.fd)
        continue
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
        subdirectories: []
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
