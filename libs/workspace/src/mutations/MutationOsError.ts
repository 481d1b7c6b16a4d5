import * as util from "node:util"
import {
  AccessDenied,
  MutationIoError,
  NotADirectory,
  NotAFile,
  PathNotFound,
  ResourceExhausted,
  SymlinkNotAllowed,
  type WalkError
} from "@serverfs/domain"
import { Effect } from "effect"
import { type At, codeOf, reasonOf } from "../OsError.js"

/** OS errors of the mutation tools → frozen codes (tool-contracts §0, mutation mapping). */
export type MutationOsError =
  | PathNotFound
  | NotAFile
  | NotADirectory
  | SymlinkNotAllowed
  | AccessDenied
  | ResourceExhausted
  | MutationIoError

export const toMutationError = (error: unknown, at: At): MutationOsError => {
  switch (codeOf(error)) {
    case "ENOENT":
      return new PathNotFound(at)
    case "EISDIR":
      return new NotAFile(at)
    case "ENOTDIR":
      return new NotADirectory(at)
    case "ELOOP":
      return new SymlinkNotAllowed(at)
    case "EACCES":
    case "EPERM":
      return new AccessDenied({ ...at, reason: "permission denied" })
    case "EMFILE":
    case "ENFILE":
      return new ResourceExhausted(at)
    case undefined:
      return new MutationIoError(at)
    default:
      return new MutationIoError({ ...at, reason: reasonOf(error) })
  }
}

/** The errno texts of a permission refusal, as the read mapping renders them in ACCESS_DENIED. */
const PERMISSION_REASONS: ReadonlySet<string> = new Set(
  [...util.getSystemErrorMap().values()].flatMap(([code, text]) =>
    code === "EACCES" || code === "EPERM" ? [text] : []
  )
)

/**
 * The descriptor walk and the final open are shared with the read channels, whose mapping calls
 * every unclassified errno ACCESS_DENIED. A mutation answers with its own table (tool-contracts
 * §0): only a permission refusal is ACCESS_DENIED (permission denied); any other OS failure of
 * the walk or the open — a name longer than NAME_MAX, an I/O error — is MUTATION_IO_ERROR.
 */
export const withMutationMapping = <A, R>(
  effect: Effect.Effect<A, WalkError, R>,
  at: At
): Effect.Effect<A, WalkError | MutationIoError, R> =>
  Effect.catchTag(effect, "ACCESS_DENIED", (denied) =>
    Effect.fail(
      PERMISSION_REASONS.has(denied.reason)
        ? new AccessDenied({ ...at, reason: "permission denied" })
        : new MutationIoError({ ...at, reason: denied.reason })
    )
  )
