import * as util from "node:util"
import {
  AccessDenied,
  NotADirectory,
  NotAFile,
  PathNotFound,
  ResourceExhausted,
  SymlinkNotAllowed,
  UnsupportedFileType,
  type WalkError
} from "@serverfs/domain"
import { isPosixError } from "@serverfs/posix"

/**
 * OS errors of the read channels → frozen codes (tool-contracts §0 "Mapping of OS errors").
 * Only the errno's generic text ever reaches a message; never the name that failed.
 */
export interface At {
  readonly workdir: string
  readonly path: string
}

const systemErrors = util.getSystemErrorMap()

/** The generic text of an errno ("permission denied"), never anything request-specific. */
export const reasonOf = (error: unknown): string => {
  if (isPosixError(error)) return systemErrors.get(error.errno)?.[1] ?? error.code
  return "unexpected error"
}

export const codeOf = (error: unknown): string | undefined => (isPosixError(error) ? error.code : undefined)

export const toWalkError = (error: unknown, at: At): WalkError => {
  switch (codeOf(error)) {
    case "ENOENT":
      return new PathNotFound(at)
    case "EISDIR":
      return new NotAFile(at)
    case "ENOTDIR":
      return new NotADirectory(at)
    case "ELOOP":
      return new SymlinkNotAllowed(at)
    case "ENXIO":
      return new UnsupportedFileType(at)
    case "EMFILE":
    case "ENFILE":
      return new ResourceExhausted(at)
    default:
      return new AccessDenied({ ...at, reason: reasonOf(error) })
  }
}
