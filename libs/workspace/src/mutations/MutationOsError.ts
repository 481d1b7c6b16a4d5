import {
  AccessDenied,
  MutationIoError,
  NotADirectory,
  NotAFile,
  PathNotFound,
  ResourceExhausted,
  SymlinkNotAllowed
} from "@serverfs/domain"
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
