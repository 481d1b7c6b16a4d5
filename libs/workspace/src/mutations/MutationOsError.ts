import {
  AccessDenied,
  MutationIoError,
  type NotADirectory,
  type NotAFile,
  type PathNotFound,
  type ResourceExhausted,
  type SymlinkNotAllowed,
  type WalkError
} from "@serverfs/domain"
import { Effect } from "effect"
import { type At, isPermissionReason, mapOsError, reasonOf } from "../OsError.js"

/** OS errors of the mutation tools → frozen codes (tool-contracts §0, mutation mapping). */
export type MutationOsError =
  | PathNotFound
  | NotAFile
  | NotADirectory
  | SymlinkNotAllowed
  | AccessDenied
  | ResourceExhausted
  | MutationIoError

/**
 * The shared rows of the OS-error table, then the mutation's own: only a permission refusal is
 * ACCESS_DENIED (permission denied); any other OS failure is MUTATION_IO_ERROR.
 */
export const toMutationError = (error: unknown, at: At): MutationOsError =>
  mapOsError(error, at, (code) => {
    switch (code) {
      case "EACCES":
      case "EPERM":
        return new AccessDenied({ ...at, reason: "permission denied" })
      case undefined:
        return new MutationIoError(at)
      default:
        return new MutationIoError({ ...at, reason: reasonOf(error) })
    }
  })

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
      isPermissionReason(denied.reason)
        ? new AccessDenied({ ...at, reason: "permission denied" })
        : new MutationIoError({ ...at, reason: denied.reason })
    )
  )
