import {
  MetadataPreservationFailed,
  MultipleHardlinksNotSupported,
  type MutationIoError,
  type ParentNotFound,
  PathAlreadyExists,
  RevisionConflict,
  type WalkError
} from "@serverfs/domain"
import type { ResolvedPath } from "@serverfs/policy"
import { AT, fstat, fstatat, fsync, linkat, O, RENAME, renameat, renameat2, unlinkat } from "@serverfs/posix"
import { Effect, type Scope } from "effect"
import { type At, codeOf } from "../OsError.js"
import { type OpenedFile, openRegularFile } from "../RegularFile.js"
import { revisionOf } from "../Revision.js"
import { copyMetadata } from "./Metadata.js"
import {
  checkNamedRevision,
  type MutationContext,
  type MutationParent,
  openMutationParent,
  syncDirectory
} from "./MutationContext.js"
import { toMutationError, withMutationMapping } from "./MutationOsError.js"
import { createTempFile, type TempFile, writeAll } from "./TempFile.js"

/**
 * The two ways a mutation publishes whole bytes, shared by the text and the binary tools so both
 * keep the same guarantees: a new file (create_text_file, upload_binary_file without overwrite)
 * and the atomic replacement of an existing one (edit_text_file, upload_binary_file with
 * overwrite). Both run inside the caller's guard (mutation lock + workdir lease) and scope.
 */

/** 0666 minus the umask, as open(2) applies it: a created file never has execute bits. */
const FILE_MODE = 0o666

/**
 * Publish the temp file under the target name without ever overwriting anything.
 *
 * renameat2(RENAME_NOREPLACE) does it in one atomic step. The contract's linkat + unlinkat
 * (kept as the fallback for filesystems without RENAME_NOREPLACE, which answer EINVAL) has a
 * window where the new file has two names: a crash there leaves the target hard-linked to a
 * reserved temp name, and every later edit of it is refused (MULTIPLE_HARDLINKS_NOT_SUPPORTED)
 * until an operator removes the temp (docs/deviations.md).
 */
const publish = (parent: number, temp: TempFile, name: string): void => {
  try {
    renameat2(parent, temp.name, parent, name, RENAME.NOREPLACE)
    temp.settled = true
    return
  } catch (error) {
    if (codeOf(error) !== "EINVAL" && codeOf(error) !== "ENOSYS") throw error
  }
  linkat(parent, temp.name, parent, name, 0)
  try {
    unlinkat(parent, temp.name, 0)
    temp.settled = true
  } catch {
    // Published; the scope's finalizer retries removing the temp name.
  }
}

/**
 * A new file (tool-contracts §2.7 "Publication"): the target must not exist in any form (file,
 * directory, symlink, FIFO, socket → PATH_ALREADY_EXISTS). temp(O_EXCL) → write → fsync →
 * publish without overwriting → revision from the published inode → fsync(dir).
 */
export const publishNewFile = (
  context: MutationContext,
  parent: MutationParent,
  bytes: Uint8Array,
  at: At
): Effect.Effect<string, PathAlreadyExists | MutationIoError | WalkError, Scope.Scope> =>
  Effect.gen(function* () {
    const existing = yield* Effect.sync(() => {
      try {
        fstatat(parent.fd, parent.name, AT.SYMLINK_NOFOLLOW)
        return true
      } catch {
        return false
      }
    })
    if (existing) return yield* new PathAlreadyExists(at)
    const temp = yield* createTempFile(parent.fd, FILE_MODE, at)
    yield* Effect.try({
      try: () => {
        writeAll(temp.fd, bytes)
        fsync(temp.fd)
      },
      catch: (e) => toMutationError(e, at)
    })
    yield* Effect.try({
      try: () => publish(parent.fd, temp, parent.name),
      catch: (e) => (codeOf(e) === "EEXIST" ? new PathAlreadyExists(at) : toMutationError(e, at))
    })
    const revision = revisionOf(
      yield* Effect.try({ try: () => fstat(temp.fd), catch: (e) => toMutationError(e, at) })
    )
    yield* syncDirectory(context, parent.fd)
    return revision
  })

/** An existing regular file opened for replacement, its revision checked. */
export interface ReplaceTarget {
  readonly parent: MutationParent
  readonly original: OpenedFile
  readonly revisionBefore: string
  /** The revision the name must still hold at the commit. */
  readonly expected: string
}

/**
 * The file checks of a replacement, in the contract's order (tool-contracts §2.8, §2.13): open
 * as a regular file (PATH_NOT_FOUND, NOT_A_FILE, SYMLINK_NOT_ALLOWED, UNSUPPORTED_FILE_TYPE —
 * the type before the revision), then the revision (`expectedRevision` undefined takes the one
 * found), then one link only.
 */
export const openReplaceTarget = (
  context: MutationContext,
  resolved: ResolvedPath,
  at: At,
  expectedRevision: string | undefined
): Effect.Effect<
  ReplaceTarget,
  WalkError | MutationIoError | ParentNotFound | RevisionConflict | MultipleHardlinksNotSupported,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const parent = yield* openMutationParent(context, resolved, at)
    const original = yield* withMutationMapping(openRegularFile(parent.fd, parent.name, O.RDONLY, at), at)
    const revisionBefore = revisionOf(original.stat)
    const expected = expectedRevision ?? revisionBefore
    if (revisionBefore !== expected) return yield* new RevisionConflict(at)
    if (original.stat.nlink > 1) return yield* new MultipleHardlinksNotSupported(at)
    return { parent, original, revisionBefore, expected }
  })

/**
 * Replace the target atomically (spec v0.2 §6): temp (0600) → write → owner, mode, xattrs from
 * the original (any failure → METADATA_PRESERVATION_FAILED, nothing changed) → fsync → the
 * revision checked again on the name at the last moment → renameat → new revision → fsync(dir).
 * A concurrent reader holds either the old inode or the new one, never a mix.
 */
export const replaceFile = (
  context: MutationContext,
  target: ReplaceTarget,
  bytes: Uint8Array,
  at: At
): Effect.Effect<
  string,
  MutationIoError | WalkError | MetadataPreservationFailed | RevisionConflict,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const { parent } = target
    // Created private (0600); the original's mode is applied by copyMetadata.
    const temp = yield* createTempFile(parent.fd, 0o600, at)
    yield* Effect.try({ try: () => writeAll(temp.fd, bytes), catch: (e) => toMutationError(e, at) })
    yield* Effect.try({
      try: () => copyMetadata(target.original, temp.fd),
      catch: () => new MetadataPreservationFailed(at)
    })
    yield* Effect.try({ try: () => fsync(temp.fd), catch: (e) => toMutationError(e, at) })
    // Last-moment check: the name must still hold the revision that was checked.
    yield* checkNamedRevision(parent, target.expected, at)
    yield* Effect.try({
      try: () => renameat(parent.fd, temp.name, parent.fd, parent.name),
      catch: (e) => toMutationError(e, at)
    })
    temp.settled = true
    const revision = revisionOf(
      yield* Effect.try({ try: () => fstat(temp.fd), catch: (e) => toMutationError(e, at) })
    )
    yield* syncDirectory(context, parent.fd)
    return revision
  })
