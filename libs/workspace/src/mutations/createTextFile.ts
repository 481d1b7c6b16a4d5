import {
  BinaryContentNotAllowed,
  type CreateTextFileInput,
  type CreateTextFileOutput,
  type MutationError,
  PathAlreadyExists,
  WriteTooLarge
} from "@serverfs/domain"
import { AT, fstat, fstatat, fsync, linkat, RENAME, renameat2, unlinkat } from "@serverfs/posix"
import { Effect } from "effect"
import { codeOf } from "../OsError.js"
import { revisionOf } from "../Revision.js"
import { authorize, type MutationContext, openMutationParent, syncDirectory } from "./MutationContext.js"
import { toMutationError } from "./MutationOsError.js"
import { createTempFile, type TempFile, writeAll } from "./TempFile.js"
import { isStorableText } from "./TextContent.js"

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
 * create_text_file (tool-contracts §2.7): the target must not exist in any form. Publication:
 * temp(O_EXCL) → write → fsync → publish without overwriting (renameat2 NOREPLACE, or linkat +
 * unlinkat) → revision from the published inode → fsync(dir).
 */
export const createTextFile = (
  context: MutationContext,
  input: CreateTextFileInput
): Effect.Effect<CreateTextFileOutput, MutationError> =>
  Effect.gen(function* () {
    const resolved = yield* authorize(context, input.workdir, input.path)
    const at = { workdir: input.workdir, path: input.path }
    if (!isStorableText(input.content)) return yield* new BinaryContentNotAllowed(at)
    const bytes = Buffer.from(input.content, "utf8")
    if (bytes.length > resolved.workdir.maxWriteBytes) {
      return yield* new WriteTooLarge({ ...at, maxBytes: resolved.workdir.maxWriteBytes })
    }
    return yield* context.guard(
      resolved.workdir,
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* openMutationParent(context, resolved, at, { parentNotFound: true })
          // Anything at the target (file, directory, symlink, FIFO, socket) → already exists.
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
          return {
            workdir: input.workdir,
            path: input.path,
            created: true as const,
            bytes_written: bytes.length,
            revision
          }
        })
      )
    )
  })
