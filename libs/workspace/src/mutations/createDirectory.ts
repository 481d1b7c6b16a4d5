import {
  type CreateDirectoryInput,
  type CreateDirectoryOutput,
  type MutationError,
  PathAlreadyExists
} from "@serverfs/domain"
import { AT, fstatat, mkdirat } from "@serverfs/posix"
import { Effect } from "effect"
import { codeOf } from "../OsError.js"
import { revisionOf } from "../Revision.js"
import { authorize, type MutationContext, openMutationParent, syncDirectory } from "./MutationContext.js"
import { toMutationError } from "./MutationOsError.js"

/** 0777 minus the umask, as mkdir(2) applies it (a setgid parent passes its bit on, as mkdir(1)). */
const DIRECTORY_MODE = 0o777

/**
 * create_directory (tool-contracts §2.10): one level, never recursive; anything already at the
 * path → PATH_ALREADY_EXISTS. The revision comes from fstatat(AT_SYMLINK_NOFOLLOW) of the new
 * name, so it equals the next stat_file.
 */
export const createDirectory = (
  context: MutationContext,
  input: CreateDirectoryInput
): Effect.Effect<CreateDirectoryOutput, MutationError> =>
  Effect.gen(function* () {
    const resolved = yield* authorize(context, input.workdir, input.path)
    const at = { workdir: input.workdir, path: input.path }
    return yield* context.guard(
      resolved.workdir,
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* openMutationParent(context, resolved, at, { parentNotFound: true })
          yield* Effect.try({
            try: () => mkdirat(parent.fd, parent.name, DIRECTORY_MODE),
            catch: (e) => (codeOf(e) === "EEXIST" ? new PathAlreadyExists(at) : toMutationError(e, at))
          })
          // The directory exists now: its revision comes from lstat of the name (never an open that
          // a racing swap could turn into a failure after the fact).
          const revision = revisionOf(
            yield* Effect.try({
              try: () => fstatat(parent.fd, parent.name, AT.SYMLINK_NOFOLLOW),
              catch: (e) => toMutationError(e, at)
            })
          )
          yield* syncDirectory(context, parent.fd)
          return { workdir: input.workdir, path: input.path, created: true as const, revision }
        })
      )
    )
  })
