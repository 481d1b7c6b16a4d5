import { Schema } from "effect"
import {
  AccessMode,
  AgentMode,
  described,
  EntryType,
  IntAtLeast,
  Pattern,
  RelativePath,
  Revision,
  Timestamp,
  WorkdirAlias,
  withDefault
} from "./Fields.js"

/**
 * Inputs and outputs of the six read tools (tool-contracts §2.1–§2.6). Inputs whose defaults
 * come from configuration are built by functions taking those values, so the advertised
 * JSON Schema `default` is the effective one.
 */

// ---- list_workdirs -------------------------------------------------------------------------
export const ListWorkdirsInput = Schema.Struct({})

export const WorkdirInfo = Schema.Struct({
  alias: Schema.String,
  description: Schema.NullOr(Schema.String),
  access: AccessMode,
  binary_transfer: Schema.Boolean,
  agent_mode: AgentMode,
  agent_runtimes: Schema.Array(Schema.String)
})
export type WorkdirInfo = typeof WorkdirInfo.Type

export const ListWorkdirsOutput = Schema.Struct({ workdirs: Schema.Array(WorkdirInfo) })
export type ListWorkdirsOutput = typeof ListWorkdirsOutput.Type

// ---- list_directory ------------------------------------------------------------------------
export const makeListDirectoryInput = (defaultLimit: number) =>
  Schema.Struct({
    workdir: WorkdirAlias,
    path: withDefault(Schema.String, "", "Directory to list, relative to the workdir root."),
    offset: withDefault(IntAtLeast(0), 0, "Number of entries to skip (entries are sorted by name)."),
    limit: withDefault(IntAtLeast(1), defaultLimit, "Maximum number of entries to return.")
  })
export type ListDirectoryInput = Schema.Schema.Type<ReturnType<typeof makeListDirectoryInput>>

export const EntryInfo = Schema.Struct({
  name: Schema.String,
  path: Schema.String,
  type: EntryType,
  size: Schema.NullOr(Schema.Number),
  modified_at: Timestamp
})
export type EntryInfo = typeof EntryInfo.Type

export const ListDirectoryOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  entries: Schema.Array(EntryInfo),
  offset: Schema.Number,
  limit: Schema.Number,
  returned: Schema.Number,
  has_more: Schema.Boolean
})
export type ListDirectoryOutput = typeof ListDirectoryOutput.Type

// ---- find_files ----------------------------------------------------------------------------
export const makeFindFilesInput = (defaultLimit: number, maxPatternLength: number) =>
  Schema.Struct({
    workdir: WorkdirAlias,
    pattern: Pattern(
      maxPatternLength,
      'Case-sensitive shell pattern (*, ?, [..]). Without "/": matched against file names. With "/": matched against the path relative to `path`; * and ? stay within one directory, ** spans directories ("**/*.md").'
    ),
    path: withDefault(Schema.String, "", "Directory to search from, relative to the workdir root."),
    limit: withDefault(IntAtLeast(1), defaultLimit, "Maximum number of matches to return.")
  })
export type FindFilesInput = Schema.Schema.Type<ReturnType<typeof makeFindFilesInput>>

export const FindFilesOutput = Schema.Struct({
  matches: Schema.Array(Schema.Struct({ path: Schema.String })),
  returned: Schema.Number,
  truncated: Schema.Boolean
})
export type FindFilesOutput = typeof FindFilesOutput.Type

// ---- search_text ---------------------------------------------------------------------------
export const makeSearchTextInput = (defaultLimit: number, maxPatternLength: number) =>
  Schema.Struct({
    workdir: WorkdirAlias,
    query: described(Schema.String, "Literal text to find (not a regular expression)."),
    path: withDefault(Schema.String, "", "Directory to search from, relative to the workdir root."),
    glob: withDefault(
      Schema.NullOr(
        Pattern(maxPatternLength, "Ripgrep glob relative to the search directory, e.g. *.md or docs/**.")
      ),
      null,
      "Optional ripgrep glob relative to the search directory, e.g. *.md or docs/**."
    ),
    case_sensitive: withDefault(Schema.Boolean, true, "Match case exactly."),
    limit: withDefault(IntAtLeast(1), defaultLimit, "Maximum number of matching lines to return.")
  })
export type SearchTextInput = Schema.Schema.Type<ReturnType<typeof makeSearchTextInput>>

export const SearchMatch = Schema.Struct({
  path: Schema.String,
  line: Schema.Number,
  text: Schema.String,
  /**
   * Present (true) only when `text` is a preview: the first SERVERFS_SEARCH_MAX_LINE_BYTES bytes
   * of a longer matched line, cut on a UTF-8 character boundary (ours, docs/deviations.md).
   */
  text_truncated: Schema.optional(Schema.Literal(true))
})
export type SearchMatch = typeof SearchMatch.Type

export const SearchTextOutput = Schema.Struct({
  matches: Schema.Array(SearchMatch),
  returned: Schema.Number,
  truncated: Schema.Boolean
})
export type SearchTextOutput = typeof SearchTextOutput.Type

// ---- read_text_file ------------------------------------------------------------------------
export const ReadTextFileInput = Schema.Struct({
  workdir: WorkdirAlias,
  path: RelativePath,
  start_line: withDefault(IntAtLeast(1), 1, "First line to return (1-based)."),
  max_lines: withDefault(IntAtLeast(1), 200, "Maximum number of lines to return.")
})
export type ReadTextFileInput = typeof ReadTextFileInput.Type

export const ReadTextFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  start_line: Schema.Number,
  end_line: Schema.Number,
  content: Schema.String,
  bytes_returned: Schema.Number,
  has_more: Schema.Boolean,
  next_start_line: Schema.NullOr(Schema.Number),
  revision: Revision
})
export type ReadTextFileOutput = typeof ReadTextFileOutput.Type

// ---- stat_file -----------------------------------------------------------------------------
export const StatFileInput = Schema.Struct({ workdir: WorkdirAlias, path: RelativePath })
export type StatFileInput = typeof StatFileInput.Type

export const StatFileOutput = Schema.Struct({
  workdir: Schema.String,
  path: Schema.String,
  type: EntryType,
  size: Schema.NullOr(Schema.Number),
  modified_at: Timestamp,
  mime_type: Schema.NullOr(Schema.String),
  revision: Revision
})
export type StatFileOutput = typeof StatFileOutput.Type
