import { Schema } from "effect"
import { described, IntAtLeast, RelativePath, Revision, WorkdirAlias, withDefault } from "./Fields.js"

/**
 * Inputs and outputs of the five mutation tools (spec v0.2 §3, tool-contracts §2.7–§2.11).
 * `expected_revision` is any string on input: an unknown or garbage token is a
 * REVISION_CONFLICT, not a schema error (tool-contracts §2.8).
 */
const ExpectedRevision = described(
  Schema.String,
  "The revision from read_text_file or stat_file; the call fails with REVISION_CONFLICT if the file changed since."
)

// ---- create_text_file ----------------------------------------------------------------------
export const CreateTextFileInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath,
  content: described(
    Schema.String,
    "The whole file content, stored byte for byte as UTF-8 (no newline added). May be empty."
  )
})
export type CreateTextFileInput = typeof CreateTextFileInput.Type

export const CreateTextFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  created: Schema.Literal(true),
  bytes_written: Schema.Number,
  revision: Revision
})
export type CreateTextFileOutput = typeof CreateTextFileOutput.Type

// ---- edit_text_file ------------------------------------------------------------------------
export const TextEdit = Schema.Struct({
  old_text: described(Schema.String, "Exact text to find (not a pattern)."),
  new_text: described(Schema.String, "Replacement text."),
  expected_count: withDefault(
    IntAtLeast(1),
    1,
    "How many non-overlapping occurrences must exist; all are replaced."
  )
})
export type TextEdit = typeof TextEdit.Type

export const EditTextFileInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath,
  expected_revision: ExpectedRevision,
  // No field description: on a refined array it would replace the item schema in the JSON
  // Schema; the tool's description says what edits are.
  edits: Schema.Array(TextEdit).pipe(Schema.minItems(1))
})
export type EditTextFileInput = typeof EditTextFileInput.Type

export const EditTextFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  edited: Schema.Literal(true),
  edits_applied: Schema.Number,
  bytes_before: Schema.Number,
  bytes_after: Schema.Number,
  revision_before: Revision,
  revision: Revision
})
export type EditTextFileOutput = typeof EditTextFileOutput.Type

// ---- delete_file ---------------------------------------------------------------------------
export const DeleteFileInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath,
  expected_revision: ExpectedRevision
})
export type DeleteFileInput = typeof DeleteFileInput.Type

export const DeleteFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  deleted: Schema.Literal(true),
  bytes_deleted: Schema.Number,
  revision_deleted: Revision
})
export type DeleteFileOutput = typeof DeleteFileOutput.Type

// ---- create_directory ----------------------------------------------------------------------
export const CreateDirectoryInput = Schema.Struct({ workdir: WorkdirAlias, path: RelativePath })
export type CreateDirectoryInput = typeof CreateDirectoryInput.Type

export const CreateDirectoryOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  created: Schema.Literal(true),
  revision: Revision
})
export type CreateDirectoryOutput = typeof CreateDirectoryOutput.Type

// ---- delete_directory ----------------------------------------------------------------------
export const DeleteDirectoryInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath,
  expected_revision: ExpectedRevision
})
export type DeleteDirectoryInput = typeof DeleteDirectoryInput.Type

export const DeleteDirectoryOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  deleted: Schema.Literal(true),
  revision_deleted: Revision
})
export type DeleteDirectoryOutput = typeof DeleteDirectoryOutput.Type
