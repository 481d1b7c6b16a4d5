import {
  CreateDirectoryInput,
  CreateDirectoryOutput,
  CreateTextFileInput,
  CreateTextFileOutput,
  DeleteDirectoryInput,
  DeleteDirectoryOutput,
  DeleteFileInput,
  DeleteFileOutput,
  EditTextFileInput,
  EditTextFileOutput
} from "@serverfs/domain"
import type { Mutations } from "@serverfs/workspace"
import { type AnyTool, defineTool, type ToolAnnotations } from "../ToolDefinition.js"

/**
 * The five mutation tools (tool-contracts §2.7–§2.11), registered always; a read-only workdir
 * refuses each with WORKDIR_READ_ONLY before any path check. Annotations per tool-contracts §1:
 * create_text_file is not idempotent (a failed retry still creates and removes a reserved temp
 * entry, which changes the parent directory's revision).
 */
const CREATE_FILE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false
}
const CREATE_DIRECTORY: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false
}
const DESTRUCTIVE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false
}

export const mutationTools = (mutations: Mutations): ReadonlyArray<AnyTool> => [
  defineTool({
    name: "create_text_file",
    title: "Create a text file",
    description:
      "Create a new UTF-8 text file in a read-write workdir. The file must not exist (there is no overwrite) and its parent directory must. Content is stored exactly as given: no newline is added or converted. Returns the new revision.",
    annotations: CREATE_FILE,
    input: CreateTextFileInput,
    output: CreateTextFileOutput,
    run: (input) => mutations.createTextFile(input),
    audit: (_input, output) => ({ bytes_written: output.bytes_written, revision: output.revision }),
    unexpected: "MUTATION_IO_ERROR"
  }),
  defineTool({
    name: "edit_text_file",
    title: "Edit a text file",
    description:
      "Replace exact text in an existing UTF-8 file of a read-write workdir. Pass the revision from read_text_file or stat_file; each edit's old_text must occur exactly expected_count times (default 1) and all occurrences are replaced. Edits apply in order and all succeed or nothing is written. Line endings, the BOM and untouched bytes are kept.",
    annotations: DESTRUCTIVE,
    input: EditTextFileInput,
    output: EditTextFileOutput,
    run: (input) => mutations.editTextFile(input),
    audit: (input, output) => ({
      edit_count: input.edits.length,
      bytes_before: output.bytes_before,
      bytes_after: output.bytes_after,
      revision: output.revision
    }),
    unexpected: "MUTATION_IO_ERROR"
  }),
  defineTool({
    name: "delete_file",
    title: "Delete a file",
    description:
      "Delete one regular file of a read-write workdir (any content). Pass its current revision; deletion is permanent. Directories need delete_directory; symbolic links are never removed.",
    annotations: DESTRUCTIVE,
    input: DeleteFileInput,
    output: DeleteFileOutput,
    run: (input) => mutations.deleteFile(input),
    audit: (_input, output) => ({ bytes_deleted: output.bytes_deleted, revision: output.revision_deleted }),
    unexpected: "MUTATION_IO_ERROR"
  }),
  defineTool({
    name: "create_directory",
    title: "Create a directory",
    description:
      "Create one directory in a read-write workdir. Not recursive: the parent must exist, and nothing may exist at the path yet.",
    annotations: CREATE_DIRECTORY,
    input: CreateDirectoryInput,
    output: CreateDirectoryOutput,
    run: (input) => mutations.createDirectory(input),
    audit: (_input, output) => ({ revision: output.revision }),
    unexpected: "MUTATION_IO_ERROR"
  }),
  defineTool({
    name: "delete_directory",
    title: "Delete an empty directory",
    description:
      "Delete one empty directory of a read-write workdir. Pass its revision from stat_file. Never recursive: delete the files first (hidden entries count, so a directory that lists as empty may still be refused).",
    annotations: DESTRUCTIVE,
    input: DeleteDirectoryInput,
    output: DeleteDirectoryOutput,
    run: (input) => mutations.deleteDirectory(input),
    audit: (_input, output) => ({ revision: output.revision_deleted }),
    unexpected: "MUTATION_IO_ERROR"
  })
]
