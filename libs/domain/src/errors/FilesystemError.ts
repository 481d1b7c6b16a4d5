import type { AgentLockUnavailable, WorkdirBusy, WorkdirRecoveryRequired } from "./LeaseErrors.js"
import type {
  BinaryContentNotAllowed,
  DirectoryNotEmpty,
  EditConflict,
  MetadataPreservationFailed,
  MultipleHardlinksNotSupported,
  MutationIoError,
  ParentNotFound,
  PathAlreadyExists,
  RevisionConflict,
  RootMutationNotAllowed,
  TooManyEdits,
  WorkdirReadOnly,
  WriteTooLarge
} from "./MutationErrors.js"
import type {
  AccessDenied,
  DeniedPath,
  HiddenPathNotAllowed,
  NotADirectory,
  NotAFile,
  PathNotFound,
  PathOutsideWorkdir,
  ReservedPath,
  ResourceExhausted,
  SymlinkNotAllowed,
  UnsupportedFileType,
  WorkdirNotFound
} from "./PathErrors.js"
import type {
  BinaryFile,
  FileChangedDuringRead,
  LineTooLarge,
  ReadFailed,
  ReadLimitExceeded,
  ResourceTooLarge,
  SearchFailed,
  SearchTimeout,
  UnsupportedTextEncoding
} from "./ReadErrors.js"

/** What the path policy can refuse before any filesystem access (tool-contracts §5, steps 1–7). */
export type PathPolicyError =
  | PathOutsideWorkdir
  | AccessDenied
  | ReservedPath
  | HiddenPathNotAllowed
  | DeniedPath

/** What walking a resolved path through directory descriptors can refuse. */
export type WalkError =
  | SymlinkNotAllowed
  | PathNotFound
  | NotADirectory
  | NotAFile
  | UnsupportedFileType
  | AccessDenied
  | ResourceExhausted

export type ReadError =
  | WorkdirNotFound
  | PathPolicyError
  | WalkError
  | BinaryFile
  | UnsupportedTextEncoding
  | LineTooLarge
  | FileChangedDuringRead
  | SearchTimeout
  | SearchFailed
  | ResourceTooLarge
  | ReadFailed
  | ReadLimitExceeded

export type MutationError =
  | WorkdirNotFound
  | WorkdirReadOnly
  | PathPolicyError
  | WalkError
  | PathAlreadyExists
  | ParentNotFound
  | RootMutationNotAllowed
  | RevisionConflict
  | EditConflict
  | TooManyEdits
  | WriteTooLarge
  | BinaryContentNotAllowed
  | MultipleHardlinksNotSupported
  | MetadataPreservationFailed
  | DirectoryNotEmpty
  | MutationIoError
  | BinaryFile
  | UnsupportedTextEncoding
  | FileChangedDuringRead
  | WorkdirBusy
  | WorkdirRecoveryRequired
  | AgentLockUnavailable
