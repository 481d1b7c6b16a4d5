/**
 * Applying edit_text_file's edits to the file's bytes (tool-contracts §2.8): exact matches
 * only, in order, all or nothing. Each edit must find exactly `expected_count` non-overlapping
 * occurrences (leftmost first), and then all of them are replaced. An empty `old_text` is only
 * allowed to fill a completely empty text, once.
 *
 * Bounded work for any input (issue 14): matching is Knuth–Morris–Pratt, linear in text plus
 * needle whatever the bytes (a native `indexOf` is not guaranteed linear: a 500 kB needle took
 * 75 s); each step's length is computed from the count *before* anything is allocated, and a
 * step longer than `limit` stops the plan (`tooLarge`), so no intermediate text ever exceeds
 * it; each step is built in one pass into a buffer of its exact size.
 *
 * Matching runs on UTF-8 bytes, not UTF-16 strings. Both the text (validated UTF-8) and the
 * edit texts (no lone surrogates: `isStorableText`) are whole characters, and UTF-8 is
 * self-synchronizing, so the byte occurrences are exactly the string occurrences, in the same
 * order, overlapping the same way — the result is byte-identical to string split/join, and
 * byte lengths add up: after = before + count × (new − old).
 */
export interface PlannedEdit {
  readonly old_text: string
  readonly new_text: string
  readonly expected_count: number
}

export type EditOutcome =
  | { readonly _tag: "applied"; readonly bytes: Uint8Array }
  | { readonly _tag: "conflict"; readonly detail: string }
  /** Applying `edit` (1-based) would make the text longer than the limit. */
  | { readonly _tag: "tooLarge"; readonly edit: number }

/** KMP failure function: failure[i] = length of the longest proper border of needle[0..i]. */
const failureOf = (needle: Uint8Array): Int32Array => {
  const failure = new Int32Array(needle.length)
  let k = 0
  for (let i = 1; i < needle.length; i++) {
    const c = needle[i]
    while (k > 0 && c !== needle[k]) k = failure[k - 1]!
    if (c === needle[k]) k++
    failure[i] = k
  }
  return failure
}

/**
 * The number of non-overlapping occurrences of `needle` (non-empty) in `text`, leftmost first;
 * the first `starts.length` starts are stored in `starts`. After a match the automaton restarts
 * empty, which is what makes the occurrences non-overlapping. Linear: every byte advances `i`
 * once and each failure step undoes an earlier advance of `k`; the skip to the next possible
 * first byte passes each byte at most once.
 */
const scan = (text: Uint8Array, needle: Uint8Array, failure: Int32Array, starts: Uint32Array): number => {
  const first = needle[0]!
  const m = needle.length
  const n = text.length
  let count = 0
  let k = 0
  let i = 0
  while (i < n) {
    if (k === 0) {
      // The automaton is empty: skip to the next byte that can start a match (a short gap in
      // JavaScript, a long one with memchr, whose call costs more than a few comparisons).
      const gapEnd = Math.min(n, i + 64)
      while (i < gapEnd && text[i] !== first) i++
      if (i === gapEnd) {
        if (i === n) break
        const next = text.indexOf(first, i)
        if (next === -1) break
        i = next
      }
    }
    const c = text[i]
    while (k > 0 && c !== needle[k]) k = failure[k - 1]!
    if (c === needle[k]) k++
    i++
    if (k === m) {
      if (count < starts.length) starts[count] = i - m
      count++
      k = 0
    }
  }
  return count
}

/** Copy `source[from, to)` to `target` at `at`; returns the next free index. */
const copyInto = (target: Uint8Array, at: number, source: Uint8Array, from: number, to: number): number => {
  const length = to - from
  if (length < 32) {
    for (let j = 0; j < length; j++) target[at + j] = source[from + j]!
  } else {
    target.set(source.subarray(from, to), at)
  }
  return at + length
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && Buffer.compare(a, b) === 0

/**
 * Apply edit number `index` (0-based, of `total`) to `text` (the file's bytes without its BOM,
 * or the previous step's result): `applied` carries this step's text, at most `limit` bytes,
 * else `tooLarge` before anything of that size is allocated. Memory: `text`, the new step (≤
 * `limit`), the edit texts' UTF-8 copies, a failure table of 4 bytes per byte of `old_text` and a
 * table of match starts of 4 bytes per match (at most one per byte of `text`).
 */
export const applyEdit = (
  text: Uint8Array,
  edit: PlannedEdit,
  index: number,
  total: number,
  limit: number
): EditOutcome => {
  const which = total > 1 ? `edit ${index + 1}: ` : ""
  const replacement = Buffer.from(edit.new_text, "utf8")
  if (edit.old_text === "") {
    if (text.length !== 0 || edit.expected_count !== 1) {
      return {
        _tag: "conflict",
        detail: `${which}an empty old_text only fills an empty file (expected_count 1)`
      }
    }
    return replacement.length > limit
      ? { _tag: "tooLarge", edit: index + 1 }
      : { _tag: "applied", bytes: replacement }
  }
  const needle = Buffer.from(edit.old_text, "utf8")
  const failure = failureOf(needle)
  // Room for the starts of a successful edit: at most expected_count, and at most one per
  // needle length of text. The whole text is counted so the conflict can say how many there
  // are (the contract's "found M"): one linear pass.
  const starts = new Uint32Array(Math.min(edit.expected_count, Math.floor(text.length / needle.length)))
  const found = scan(text, needle, failure, starts)
  if (found !== edit.expected_count) {
    return {
      _tag: "conflict",
      detail: `${which}expected ${edit.expected_count} occurrence(s), found ${found}`
    }
  }
  const length = text.length + found * (replacement.length - needle.length)
  if (length > limit) return { _tag: "tooLarge", edit: index + 1 }
  if (sameBytes(needle, replacement)) return { _tag: "applied", bytes: text }
  const next = Buffer.allocUnsafe(length)
  let from = 0
  let to = 0
  for (let j = 0; j < found; j++) {
    const start = starts[j]!
    to = copyInto(next, to, text, from, start)
    to = copyInto(next, to, replacement, 0, replacement.length)
    from = start + needle.length
  }
  copyInto(next, to, text, from, text.length)
  return { _tag: "applied", bytes: next }
}

/**
 * Plan and apply all of `edits` to `original` in one go (edit_text_file runs the steps with
 * `applyEdit`, letting other calls run between them). At most two step texts are alive at once.
 */
export const applyEdits = (
  original: Uint8Array,
  edits: ReadonlyArray<PlannedEdit>,
  limit: number
): EditOutcome => {
  let text = original
  for (const [index, edit] of edits.entries()) {
    const step = applyEdit(text, edit, index, edits.length, limit)
    if (step._tag !== "applied") return step
    text = step.bytes
  }
  return { _tag: "applied", bytes: text }
}
