import {
  type DeleteFileInput,
  type DeleteFileOutput,
  type MutationError,
  RevisionConflict
} from "@serverfs/domain"
import { O, unlinkat } from "@serverfs/posix"
import { Effect } from "effect"
import { openRegularFile } from "../RegularFile.js"
import { revisionOf } from "../Revision.js"
import {
  authorize,
  checkNamedRevision,
  type MutationContext,
  openMutationParent,
  syncDirectory
} from "./MutationContext.js"
import { toMutationError, withMutationMapping } from "./MutationOsError.js"

/**
 * delete_file (tool-contracts §2.9): regular files only, any content. The file is opened
 * O_RDONLY first — write permission on the directory is not a licence to delete a file the
 * server cannot read — and its revision is checked on the fd and on the name; the name is
 * unlinked while the verified fd is still held.
 */
export const deleteFile = (
  context: MutationContext,
  input: DeleteFileInput
): Effect.Effect<DeleteFileOutput, MutationError> =>
  Effect.gen(function* () {
    const resolved = yield* authorize(context, input.workdir, input.path)
    const at = { workdir: input.workdir, path: input.path }
    return yield* context.guard(
      resolved.workdir,
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* openMutationParent(context, resolved, at)
          const file = yield* withMutationMapping(openRegularFile(parent.fd, parent.name, O.RDONLY, at), at)
          if (revisionOf(file.stat) !== input.expected_revision) return yield* new RevisionConflict(at)
          yield* checkNamedRevision(parent, input.expected_revision, at)
          yield* Effect.try({
            try: () => unlinkat(parent.fd, parent.name, 0),
            catch: (e) => toMutationError(e, at)
          })
          yield* syncDirectory(context, parent.fd)
          return {
            workdir: input.workdir,
            path: input.path,
            deleted: true as const,
            bytes_deleted: file.stat.size,
            revision_deleted: input.expected_revision
          }
        })
      )
    )
  })
