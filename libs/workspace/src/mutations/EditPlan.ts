/**
 * Applying edit_text_file's edits to the in-memory text (tool-contracts §2.8): exact matches
 * only, in order, all or nothing. Each edit must find exactly `expected_count`
 * non-overlapping occurrences, and then all of them are replaced. An empty `old_text` is only
 * allowed to fill a completely empty text, once.
 */
export interface PlannedEdit {
  readonly old_text: string
  readonly new_text: string
  readonly expected_count: number
}

export type EditOutcome =
  | { readonly _tag: "applied"; readonly text: string }
  | { readonly _tag: "conflict"; readonly detail: string }

const countOccurrences = (text: string, needle: string): number => {
  let count = 0
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

export const applyEdits = (original: string, edits: ReadonlyArray<PlannedEdit>): EditOutcome => {
  let text = original
  for (const [index, edit] of edits.entries()) {
    const which = edits.length > 1 ? `edit ${index + 1}: ` : ""
    if (edit.old_text === "") {
      if (text !== "" || edit.expected_count !== 1) {
        return {
          _tag: "conflict",
          detail: `${which}an empty old_text only fills an empty file (expected_count 1)`
        }
      }
      text = edit.new_text
      continue
    }
    const found = countOccurrences(text, edit.old_text)
    if (found !== edit.expected_count) {
      return {
        _tag: "conflict",
        detail: `${which}expected ${edit.expected_count} occurrence(s), found ${found}`
      }
    }
    text = text.split(edit.old_text).join(edit.new_text)
  }
  return { _tag: "applied", text }
}
