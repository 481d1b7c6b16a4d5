import { Schema } from "effect"
import {
  BinaryFileTooLarge,
  BinarySourceConflict,
  BinarySourceRequired,
  BinaryTransferDisabled,
  ExpectedRevisionNotAllowed,
  ExpectedRevisionRequired,
  InvalidBase64
} from "./BinaryErrors.js"
import {
  AddressNotAllowed,
  BinaryPayloadTooLarge,
  DnsFailed,
  FileIngressDisabled,
  FileIngressFailed,
  FileIngressUnavailable,
  HostNotAllowed,
  TooManyRedirects,
  UpstreamFailed,
  UrlNotAllowed
} from "./IngressErrors.js"
import { InvalidArgument } from "./InvalidArgument.js"
import { AgentLockUnavailable, WorkdirBusy, WorkdirRecoveryRequired } from "./LeaseErrors.js"
import {
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
import {
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
import {
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

/**
 * The filesystem plane's frozen errors (spec v0.2 §8, tool-contracts §0–§5), one class per code.
 * This map IS the list of filesystem codes: FilesystemErrorCode
 * and the frozen-error registry (FrozenErrors.ts) derive from it, so a code cannot exist without
 * its class. Tool errors are rendered `CODE: message`.
 */
export const FILESYSTEM_ERRORS = {
  WORKDIR_NOT_FOUND: WorkdirNotFound,
  PATH_OUTSIDE_WORKDIR: PathOutsideWorkdir,
  RESERVED_PATH: ReservedPath,
  HIDDEN_PATH_NOT_ALLOWED: HiddenPathNotAllowed,
  DENIED_PATH: DeniedPath,
  SYMLINK_NOT_ALLOWED: SymlinkNotAllowed,
  PATH_NOT_FOUND: PathNotFound,
  NOT_A_FILE: NotAFile,
  NOT_A_DIRECTORY: NotADirectory,
  UNSUPPORTED_FILE_TYPE: UnsupportedFileType,
  ACCESS_DENIED: AccessDenied,
  RESOURCE_EXHAUSTED: ResourceExhausted,
  BINARY_FILE: BinaryFile,
  UNSUPPORTED_TEXT_ENCODING: UnsupportedTextEncoding,
  LINE_TOO_LARGE: LineTooLarge,
  FILE_CHANGED_DURING_READ: FileChangedDuringRead,
  SEARCH_TIMEOUT: SearchTimeout,
  SEARCH_FAILED: SearchFailed,
  RESOURCE_TOO_LARGE: ResourceTooLarge,
  READ_FAILED: ReadFailed,
  READ_LIMIT_EXCEEDED: ReadLimitExceeded,
  WORKDIR_READ_ONLY: WorkdirReadOnly,
  PATH_ALREADY_EXISTS: PathAlreadyExists,
  PARENT_NOT_FOUND: ParentNotFound,
  ROOT_MUTATION_NOT_ALLOWED: RootMutationNotAllowed,
  REVISION_CONFLICT: RevisionConflict,
  EDIT_CONFLICT: EditConflict,
  TOO_MANY_EDITS: TooManyEdits,
  WRITE_TOO_LARGE: WriteTooLarge,
  BINARY_CONTENT_NOT_ALLOWED: BinaryContentNotAllowed,
  MULTIPLE_HARDLINKS_NOT_SUPPORTED: MultipleHardlinksNotSupported,
  METADATA_PRESERVATION_FAILED: MetadataPreservationFailed,
  DIRECTORY_NOT_EMPTY: DirectoryNotEmpty,
  MUTATION_IO_ERROR: MutationIoError,
  WORKDIR_BUSY: WorkdirBusy,
  WORKDIR_RECOVERY_REQUIRED: WorkdirRecoveryRequired,
  AGENT_LOCK_UNAVAILABLE: AgentLockUnavailable,
  INVALID_ARGUMENT: InvalidArgument,
  BINARY_PAYLOAD_TOO_LARGE: BinaryPayloadTooLarge,
  FILE_INGRESS_DISABLED: FileIngressDisabled,
  FILE_INGRESS_UNAVAILABLE: FileIngressUnavailable,
  FILE_INGRESS_FAILED: FileIngressFailed,
  URL_NOT_ALLOWED: UrlNotAllowed,
  HOST_NOT_ALLOWED: HostNotAllowed,
  ADDRESS_NOT_ALLOWED: AddressNotAllowed,
  DNS_FAILED: DnsFailed,
  TOO_MANY_REDIRECTS: TooManyRedirects,
  UPSTREAM_FAILED: UpstreamFailed,
  BINARY_TRANSFER_DISABLED: BinaryTransferDisabled,
  BINARY_FILE_TOO_LARGE: BinaryFileTooLarge,
  EXPECTED_REVISION_REQUIRED: ExpectedRevisionRequired,
  EXPECTED_REVISION_NOT_ALLOWED: ExpectedRevisionNotAllowed,
  BINARY_SOURCE_REQUIRED: BinarySourceRequired,
  BINARY_SOURCE_CONFLICT: BinarySourceConflict,
  INVALID_BASE64: InvalidBase64
} as const

export type FilesystemErrorCode = keyof typeof FILESYSTEM_ERRORS
/** Every filesystem-plane code, in the order above. */
export const FilesystemErrorCode = Schema.Literal(
  ...(Object.keys(FILESYSTEM_ERRORS) as [FilesystemErrorCode, ...Array<FilesystemErrorCode>])
)
export type FilesystemFrozenError = InstanceType<(typeof FILESYSTEM_ERRORS)[FilesystemErrorCode]>

/** `CODE: message` — the one text form of a tool error (tool-contracts §0). */
export const renderError = (error: { readonly _tag: string; readonly message: string }): string =>
  `${error._tag}: ${error.message}`
