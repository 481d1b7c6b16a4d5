import { Schema } from "effect"
import { RelativePath, Revision, WorkdirAlias, withDefault } from "./Fields.js"

/**
 * Inputs and outputs of the two binary tools (tool-contracts §2.12–§2.13), registered only when
 * a workdir enables binary transfer.
 */

// ---- download_binary_file ------------------------------------------------------------------
export const DownloadBinaryFileInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath
})
export type DownloadBinaryFileInput = typeof DownloadBinaryFileInput.Type

/** The structuredContent (and outputSchema); the bytes travel in the EmbeddedResource blob. */
export const DownloadBinaryFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  size: Schema.Number,
  mime_type: Schema.String,
  sha256: Schema.String,
  revision: Revision
})
export type DownloadBinaryFileOutput = typeof DownloadBinaryFileOutput.Type

// ---- upload_binary_file --------------------------------------------------------------------
/** Bounds of a fileParams object's strings: a signed URL is long, but not unbounded. */
const MAX_URL_LENGTH = 8192
const MAX_FIELD_LENGTH = 1024
const Bounded = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters long` }))

/**
 * An OpenAI fileParams object (`openai/fileParams`): the host uploads the user's file and passes
 * where to fetch it. Extra keys are refused (the call pipeline decodes with
 * onExcessProperty: "error"). `file_name` and `mime_type` are informational only.
 */
export const FileParams = Schema.Struct({
  download_url: Bounded(MAX_URL_LENGTH),
  file_id: Bounded(MAX_FIELD_LENGTH),
  mime_type: Schema.optional(Schema.NullOr(Bounded(MAX_FIELD_LENGTH))),
  file_name: Schema.optional(Schema.NullOr(Bounded(MAX_FIELD_LENGTH)))
})
export type FileParams = typeof FileParams.Type

export const UploadBinaryFileInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath,
  data_base64: withDefault(
    Schema.NullOr(Schema.String),
    null,
    'The file content in strict RFC 4648 base64 (no whitespace, "=" padding). "" is an empty file.'
  ),
  file: withDefault(
    Schema.NullOr(FileParams),
    null,
    "A file attached in the chat (fileParams), fetched by the server's file ingress; instead of data_base64."
  ),
  overwrite: withDefault(
    Schema.Boolean,
    false,
    "Replace an existing file; requires expected_revision. Without it the file must not exist."
  ),
  expected_revision: withDefault(
    Schema.NullOr(Schema.String),
    null,
    "With overwrite=true: the file's revision from stat_file; REVISION_CONFLICT if it changed since."
  )
})
export type UploadBinaryFileInput = typeof UploadBinaryFileInput.Type

export const UploadBinaryFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  created: Schema.Boolean,
  replaced: Schema.Boolean,
  bytes_written: Schema.Number,
  sha256: Schema.String,
  revision_before: Schema.NullOr(Revision),
  revision: Revision
})
export type UploadBinaryFileOutput = typeof UploadBinaryFileOutput.Type
