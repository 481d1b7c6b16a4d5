import {
  type DeleteDirectoryInput,
  type DeleteDirectoryOutput,
  DirectoryNotEmpty,
  type MutationError,
  RevisionConflict
} from "@serverfs/domain"
import { AT, fstat, O, readdir, unlinkat } from "@serverfs/posix"
import { Effect } from "effect"
import { openDirectory } from "../DescriptorWalk.js"
import { codeOf } from "../OsError.js"
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
 * delete_directory (tool-contracts §2.11): empty directories only, never recursive. The
 * revision is checked before emptiness; emptiness is physical (hidden, denied and reserved
 * entries count, and none is ever named); the revision is checked again on the name, then
 * unlinkat(AT_REMOVEDIR) — whose ENOTEMPTY is the second gate — and the parent is fsynced.
 */
export const deleteDirectory = (
  context: MutationContext,
  input: DeleteDirectoryInput
): Effect.Effect<DeleteDirectoryOutput, MutationError> =>
  Effect.gen(function* () {
    const resolved = yield* authorize(context, input.workdir, input.path)
    const at = { workdir: input.workdir, path: input.path }
    return yield* context.guard(
      resolved.workdir,
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* openMutationParent(context, resolved, at)
          const directory = yield* withMutationMapping(
            openDirectory(parent.fd, [parent.name], O.RDONLY, at),
            at
          )
          const revision = yield* Effect.try({
            try: () => revisionOf(fstat(directory)),
            catch: (e) => toMutationError(e, at)
          })
          if (revision !== input.expected_revision) return yield* new RevisionConflict(at)
          const listing = yield* Effect.try({
            try: () => readdir(directory),
            catch: (e) => toMutationError(e, at)
          })
          if (listing.names.length + listing.undecodable > 0) return yield* new DirectoryNotEmpty(at)
          yield* checkNamedRevision(parent, input.expected_revision, at)
          yield* Effect.try({
            try: () => unlinkat(parent.fd, parent.name, AT.REMOVEDIR),
            catch: (e) => {
              const code = codeOf(e)
              return code === "ENOTEMPTY" || code === "EEXIST"
                ? new DirectoryNotEmpty(at)
                : toMutationError(e, at)
            }
          })
          yield* syncDirectory(context, parent.fd)
          return {
            workdir: input.workdir,
            path: input.path,
            deleted: true as const,
            revision_deleted: input.expected_revision
          }
        })
      )
    )
  })
