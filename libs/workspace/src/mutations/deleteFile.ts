import {
  type DeleteFileInput,
  type DeleteFileOutput,
  type MutationError,
  RevisionConflict
} from "@serverfs/domain"
import { AT, fstatat, O, unlinkat } from "@serverfs/posix"
import { Effect } from "effect"
import { openParent } from "../DescriptorWalk.js"
import { openRegularFile } from "../RegularFile.js"
import { revisionOf } from "../Revision.js"
import { authorize, type MutationContext, syncDirectory } from "./MutationContext.js"
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
    const root = context.rootOf(resolved.workdir)
    return yield* context.guard(
      resolved.workdir,
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* withMutationMapping(openParent(root, resolved.components, O.RDONLY, at), at)
          const file = yield* withMutationMapping(openRegularFile(parent.fd, parent.name, O.RDONLY, at), at)
          if (revisionOf(file.stat) !== input.expected_revision) return yield* new RevisionConflict(at)
          const named = yield* Effect.try({
            try: () => revisionOf(fstatat(parent.fd, parent.name, AT.SYMLINK_NOFOLLOW)),
            catch: () => new RevisionConflict(at)
          })
          if (named !== input.expected_revision) return yield* new RevisionConflict(at)
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
