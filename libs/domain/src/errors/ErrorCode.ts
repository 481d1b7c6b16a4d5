import { Schema } from "effect"

/**
 * Every frozen error code a client can see (spec v0.2 §8, tool-contracts §0–§5). Tool errors
 * are rendered `CODE: message`; docs/errors.md is checked against this list.
 */
export const FilesystemErrorCode = Schema.Literal(
  "WORKDIR_NOT_FOUND",
  "PATH_OUTSIDE_WORKDIR",
  "RESERVED_PATH",
  "HIDDEN_PATH_NOT_ALLOWED",
  "DENIED_PATH",
  "SYMLINK_NOT_ALLOWED",
  "PATH_NOT_FOUND",
  "NOT_A_FILE",
  "NOT_A_DIRECTORY",
  "UNSUPPORTED_FILE_TYPE",
  "ACCESS_DENIED",
  "RESOURCE_EXHAUSTED",
  "BINARY_FILE",
  "UNSUPPORTED_TEXT_ENCODING",
  "LINE_TOO_LARGE",
  "FILE_CHANGED_DURING_READ",
  "SEARCH_TIMEOUT",
  "SEARCH_FAILED",
  "RESOURCE_TOO_LARGE",
  "READ_FAILED",
  "READ_LIMIT_EXCEEDED",
  "WORKDIR_READ_ONLY",
  "PATH_ALREADY_EXISTS",
  "PARENT_NOT_FOUND",
  "ROOT_MUTATION_NOT_ALLOWED",
  "REVISION_CONFLICT",
  "EDIT_CONFLICT",
  "TOO_MANY_EDITS",
  "WRITE_TOO_LARGE",
  "BINARY_CONTENT_NOT_ALLOWED",
  "MULTIPLE_HARDLINKS_NOT_SUPPORTED",
  "METADATA_PRESERVATION_FAILED",
  "DIRECTORY_NOT_EMPTY",
  "MUTATION_IO_ERROR",
  "WORKDIR_BUSY",
  "WORKDIR_RECOVERY_REQUIRED",
  "AGENT_LOCK_UNAVAILABLE",
  "INVALID_ARGUMENT",
  "BINARY_PAYLOAD_TOO_LARGE",
  "FILE_INGRESS_DISABLED",
  "FILE_INGRESS_UNAVAILABLE",
  "FILE_INGRESS_FAILED",
  "URL_NOT_ALLOWED",
  "HOST_NOT_ALLOWED",
  "ADDRESS_NOT_ALLOWED",
  "DNS_FAILED",
  "TOO_MANY_REDIRECTS",
  "UPSTREAM_FAILED",
  "BINARY_TRANSFER_DISABLED",
  "BINARY_FILE_TOO_LARGE",
  "EXPECTED_REVISION_REQUIRED",
  "EXPECTED_REVISION_NOT_ALLOWED",
  "BINARY_SOURCE_REQUIRED",
  "BINARY_SOURCE_CONFLICT",
  "INVALID_BASE64"
)
export type FilesystemErrorCode = typeof FilesystemErrorCode.Type

/** `CODE: message` — the one text form of a tool error (tool-contracts §0). */
export const renderError = (error: { readonly _tag: string; readonly message: string }): string =>
  `${error._tag}: ${error.message}`
