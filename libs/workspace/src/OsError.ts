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

/** The texts `reasonOf` gives a permission refusal (EACCES, EPERM). */
const permissionReasons: ReadonlySet<string> = new Set(
  [...systemErrors.values()].flatMap(([code, text]) => (code === "EACCES" || code === "EPERM" ? [text] : []))
)

/** Whether an ACCESS_DENIED reason rendered by `reasonOf` is a permission refusal (EACCES, EPERM). */
export const isPermissionReason = (reason: string): boolean => permissionReasons.has(reason)

/**
 * The rows every OS-error table shares (read channels and mutations alike); any other errno —
 * or a non-OS error, whose code is undefined — is left to the table's own `otherwise`.
 */
export const mapOsError = <E>(
  error: unknown,
  at: At,
  otherwise: (code: string | undefined) => E
): PathNotFound | NotAFile | NotADirectory | SymlinkNotAllowed | ResourceExhausted | E => {
  const code = codeOf(error)
  switch (code) {
    case "ENOENT":
      return new PathNotFound(at)
    case "EISDIR":
      return new NotAFile(at)
    case "ENOTDIR":
      return new NotADirectory(at)
    case "ELOOP":
      return new SymlinkNotAllowed(at)
    case "EMFILE":
    case "ENFILE":
      return new ResourceExhausted(at)
    default:
      return otherwise(code)
  }
}

/** The read mapping: ENXIO is an unsupported file type, every other errno ACCESS_DENIED. */
export const toWalkError = (error: unknown, at: At): WalkError =>
  mapOsError(error, at, (code) =>
    code === "ENXIO" ? new UnsupportedFileType(at) : new AccessDenied({ ...at, reason: reasonOf(error) })
  )
