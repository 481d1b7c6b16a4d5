import * as path from "node:path"
import {
  type FileChangeSource,
  type HostPathRedaction,
  hunk,
  type PreviewBounds,
  previewFileChanges,
  wholeFileDiff
} from "@serverfs/domain"
import type { CurrentFile } from "./ClaudeCurrentFile.js"

/**
 * The change a Claude file tool asks to make, as the approval's `file_changes` (issue 15 item 2),
 * built from the tool input and bounded by the domain's one preview function:
 * - `Write`: against the current file read safely (ClaudeCurrentFile): missing → kind `add`
 *   (diff against empty), a text → `update` (whole-file diff), unreadable → no kind, the new
 *   content as the diff;
 * - `Edit`: `update`, one hunk old_string → new_string, line numbers relative to the snippet;
 * - `MultiEdit`: `update`, one such hunk per edit, in order;
 * - `NotebookEdit`: `update`, the new cell source as added lines (no diff for a delete).
 * The tool input's content fields leave `tool_input` (the diff shows them, bounded).
 */
export const FILE_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"])

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

export const filePathOf = (input: Record<string, unknown>): string | undefined =>
  str(input.file_path) ?? str(input.notebook_path)

const editsOf = (input: Record<string, unknown>): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(input.edits)
    ? (input.edits as ReadonlyArray<unknown>).filter(
        (e): e is Record<string, unknown> => typeof e === "object" && e !== null
      )
    : []

/** The change's kind and diff (before headers), or neither when the input carries no content. */
const sourceOf = (
  tool: string,
  input: Record<string, unknown>,
  current: CurrentFile
): Omit<FileChangeSource, "path"> => {
  switch (tool) {
    case "Write": {
      const content = str(input.content) ?? ""
      if (current._tag === "missing") return { kind: "add", diff: wholeFileDiff(null, content) }
      if (current._tag === "text") return { kind: "update", diff: wholeFileDiff(current.text, content) }
      return { diff: wholeFileDiff(null, content) }
    }
    case "Edit":
      return { kind: "update", diff: hunk(str(input.old_string) ?? "", str(input.new_string) ?? "") }
    case "MultiEdit":
      return {
        kind: "update",
        diff: editsOf(input)
          .map((e) => hunk(str(e.old_string) ?? "", str(e.new_string) ?? ""))
          .join("")
      }
    case "NotebookEdit": {
      const source = str(input.new_source)
      return source === undefined || input.edit_mode === "delete"
        ? { kind: "update" }
        : { kind: "update", diff: hunk("", source) }
    }
    default:
      return {}
  }
}

/** The `file_changes` of a file tool's approval (display path, kind, bounded redacted diff). */
export const fileChangesOf = (
  tool: string,
  input: Record<string, unknown>,
  cwd: string,
  current: CurrentFile,
  redaction: HostPathRedaction,
  bounds: PreviewBounds
) => {
  const file = filePathOf(input)
  if (file === undefined) return undefined
  const display = redaction.path(path.resolve(cwd, file))
  return previewFileChanges([{ path: display, ...sourceOf(tool, input, current) }], redaction, bounds)
}

const CONTENT_KEYS: ReadonlySet<string> = new Set(["content", "old_string", "new_string", "new_source"])

/** A file tool's input without its content (shown as the diff); MultiEdit keeps each edit's flags. */
export const toolInputShown = (tool: string, input: Record<string, unknown>): Record<string, unknown> => {
  if (!FILE_TOOLS.has(tool)) return input
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) {
    if (CONTENT_KEYS.has(key)) continue
    out[key] =
      key === "edits"
        ? editsOf(input).map((e) => (e.replace_all === undefined ? {} : { replace_all: e.replace_all }))
        : value
  }
  return out
}
