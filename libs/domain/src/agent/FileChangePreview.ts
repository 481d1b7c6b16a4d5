import type { HostPathRedaction } from "../redaction/HostPathRedaction.js"
import {
  MAX_FILE_CHANGE_DIFF_BYTES,
  MAX_FILE_CHANGES_DIFF_BYTES,
  MAX_INTERACTION_BYTES
} from "./ContractLimits.js"
import type { ApprovalPayload, FileChange, FileChangeKind } from "./Interactions.js"

/**
 * What the chat sees of a file-change approval (issue 15 item 2): each change as a unified diff,
 * redacted and bounded here — the one place both adapters go through. Pure: the adapters bring
 * the change (Codex's item, Claude's tool input and the file's current text).
 *
 * - A diff is `--- a/<path>` / `+++ b/<path>` (`/dev/null` for an add's old or a delete's new
 *   side) with the DISPLAY path, then hunks.
 * - Host paths: the task's workdir root becomes workdir-relative, other workdir roots
 *   `<workdir>`, and every other absolute path of two or more components `<path>` — a narrower
 *   test than a message's, so that `//` comments, division and `/` alone survive in code.
 * - Bounds: at most MAX_FILE_CHANGE_DIFF_BYTES per change and MAX_FILE_CHANGES_DIFF_BYTES for
 *   all changes of one approval, UTF-8 bytes, the marker included. A cut ends at a line
 *   boundary (inside one over-long line: at a code-point boundary) and is followed by the line
 *   `… [diff truncated: N more bytes]`; `diff_truncated` is then true. A change with no room
 *   left keeps its path and kind, no diff, `diff_truncated: true`.
 * - Content with a NUL byte is binary: its diff is the single line `Binary files differ`.
 * - Work is bounded: a diff is cut to 64 KiB (at a line end) before it is redacted; the marker's
 *   N counts the bytes cut away there as sent by the provider, the rest as shown.
 */

/** A change as an adapter knows it: display path, kind, and its diff text (headers optional). */
export interface FileChangeSource {
  /** The display path (already workdir-relative or `<outside-workdir>`). */
  readonly path: string
  readonly kind?: FileChangeKind | undefined
  /** Hunks (a leading `---`/`+++` pair is replaced by the display-path headers). */
  readonly diff?: string | undefined
  /** Bytes of the diff an adapter already left out (`retainedDiff`), counted by the marker. */
  readonly omittedBytes?: number | undefined
}

// ---- building unified diffs --------------------------------------------------------------------

const CONTEXT_LINES = 3
const NO_NEWLINE = "\\ No newline at end of file\n"

/** Lines with their terminators ("\r\n" stays whole: CRLF files keep their ends). */
const splitLines = (text: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let from = 0
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", from)) {
    out.push(text.slice(from, at + 1))
    from = at + 1
  }
  if (from < text.length) out.push(text.slice(from))
  return out
}

const diffLine = (mark: string, line: string): string =>
  line.endsWith("\n") ? `${mark}${line}` : `${mark}${line}\n${NO_NEWLINE}`

const range = (start: number, count: number): string =>
  count === 0 ? `${start},0` : count === 1 ? `${start + 1}` : `${start + 1},${count}`

/**
 * One hunk from `before` to `after`: the common leading and trailing lines trimmed to three of
 * context, the middle removed and added. Not a minimal diff — a correct one, bounded work
 * (linear), which is what an approval needs. "" when nothing changed.
 */
export const hunk = (before: string, after: string): string => {
  const a = splitLines(before)
  const b = splitLines(after)
  let prefix = 0
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  let suffix = 0
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++
  if (prefix === a.length && prefix === b.length) return ""
  const start = Math.max(0, prefix - CONTEXT_LINES)
  const tail = Math.min(suffix, CONTEXT_LINES)
  const aEnd = a.length - suffix + tail
  const bEnd = b.length - suffix + tail
  const lines = [
    ...a.slice(start, prefix).map((l) => diffLine(" ", l)),
    ...a.slice(prefix, a.length - suffix).map((l) => diffLine("-", l)),
    ...b.slice(prefix, b.length - suffix).map((l) => diffLine("+", l)),
    ...a.slice(a.length - suffix, aEnd).map((l) => diffLine(" ", l))
  ]
  return `@@ -${range(start, aEnd - start)} +${range(start, bEnd - start)} @@\n${lines.join("")}`
}

/** The headers of a change's diff, with the display path. */
const headers = (path: string, kind: FileChangeKind | undefined): string =>
  `--- ${kind === "add" ? "/dev/null" : `a/${path}`}\n+++ ${kind === "delete" ? "/dev/null" : `b/${path}`}\n`

/** Hunks without a leading `---`/`+++` pair (a provider's own headers name host paths). */
const withoutHeaders = (diff: string): string => {
  const lines = splitLines(diff)
  return lines.length >= 2 && lines[0]?.startsWith("--- ") && lines[1]?.startsWith("+++ ")
    ? lines.slice(2).join("")
    : diff
}

// ---- redaction ---------------------------------------------------------------------------------

/** Characters after which an absolute path may start (or the text's start). */
const PATH_LEAD = new Set([..." \t\n\r'\"`(=[{,:;<>|&"])
/** Characters that end a path. */
const PATH_END = new Set([..." \t\n\r'\"`)]},;:<>|&"])
const SEGMENT_START = /[A-Za-z0-9._~@+-]/

/**
 * Host paths in diff text: the task's root as a path component becomes relative (the
 * `command` rule), other roots `<workdir>`; then every absolute path of two components or more
 * `<path>` (`/usr/lib/x`, `/tmp/abc/f`), leaving URLs, `//`, `/*` and single `/word` alone.
 */
export const redactDiffText = (text: string, redaction: HostPathRedaction): string => {
  const input = redaction.text(redaction.command(text))
  let out = ""
  let i = 0
  while (i < input.length) {
    const c = input[i] as string
    const lead = i === 0 || PATH_LEAD.has(input[i - 1] as string)
    const url = input[i - 1] === ":" && input[i + 1] === "/"
    if (c === "/" && lead && !url && SEGMENT_START.test(input[i + 1] ?? "")) {
      let end = i + 1
      while (end < input.length && !PATH_END.has(input[end] as string)) end++
      const token = input.slice(i, end)
      const second = token.indexOf("/", 1)
      if (second !== -1 && second < token.length - 1) {
        out += "<path>"
        i = end
        continue
      }
    }
    out += c
    i++
  }
  return out
}

// ---- bounding ----------------------------------------------------------------------------------

const utf8 = (text: string): number => Buffer.byteLength(text, "utf8")

export const truncationMarker = (moreBytes: number): string => `… [diff truncated: ${moreBytes} more bytes]\n`

/** The longest prefix of `bytes` within `budget`, at a line end, else at a code point start. */
const cutAt = (bytes: Buffer, budget: number): number => {
  if (budget <= 0) return 0
  const newline = bytes.lastIndexOf(0x0a, budget - 1)
  if (newline !== -1) return newline + 1
  let cut = budget
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--
  return cut
}

/**
 * What is kept of a diff before it is redacted and bounded (and what an adapter holds in
 * memory): at most RETAINED_BYTES, cut at a line end; the bytes left out are counted.
 */
const RETAINED_BYTES = 4 * MAX_FILE_CHANGE_DIFF_BYTES

export const retainedDiff = (text: string): { readonly diff: string; readonly omittedBytes: number } => {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no encoding.
  if (text.length * 3 <= RETAINED_BYTES) return { diff: text, omittedBytes: 0 }
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= RETAINED_BYTES) return { diff: text, omittedBytes: 0 }
  const cut = cutAt(bytes, RETAINED_BYTES)
  return { diff: bytes.subarray(0, cut).toString("utf8"), omittedBytes: bytes.length - cut }
}

/** `text` within `allowed` bytes (marker included), or undefined when not even a marker fits. */
const bounded = (
  text: string,
  omitted: number,
  allowed: number
): { readonly text: string; readonly truncated: boolean } | undefined => {
  const size = utf8(text) + omitted
  // Text already left out is always announced, even when what is left would fit.
  if (omitted === 0 && size <= allowed) return { text, truncated: false }
  // One byte reserved for the newline that ends a line cut in its middle.
  const room = allowed - utf8(truncationMarker(size)) - 1
  if (room < 0) return undefined
  const bytes = Buffer.from(text, "utf8")
  const cut = cutAt(bytes, room)
  const kept = bytes.subarray(0, cut).toString("utf8")
  const separator = kept === "" || kept.endsWith("\n") ? "" : "\n"
  // The marker's count (size - cut) is never wider than the reserved one (size).
  return { text: `${kept}${separator}${truncationMarker(size - cut)}`, truncated: true }
}

export interface PreviewBounds {
  readonly perChange: number
  readonly total: number
}

export const DEFAULT_BOUNDS: PreviewBounds = {
  perChange: MAX_FILE_CHANGE_DIFF_BYTES,
  total: MAX_FILE_CHANGES_DIFF_BYTES
}

/** The approval's `file_changes`: each diff with headers, redacted, within the bounds. */
export const previewFileChanges = (
  changes: ReadonlyArray<FileChangeSource>,
  redaction: HostPathRedaction,
  bounds: PreviewBounds = DEFAULT_BOUNDS
): Array<FileChange> => {
  let remaining = Math.min(bounds.total, MAX_FILE_CHANGES_DIFF_BYTES)
  return changes.map((change): FileChange => {
    const base = { path: change.path, ...(change.kind === undefined ? {} : { kind: change.kind }) }
    if (change.diff === undefined) return base
    const binary = change.diff.includes("\u0000")
    // Bounded work: only what can be shown (and a margin for redaction) is redacted.
    const retained = binary ? { diff: "", omittedBytes: 0 } : retainedDiff(change.diff)
    const body = binary ? "Binary files differ\n" : redactDiffText(withoutHeaders(retained.diff), redaction)
    const omitted = retained.omittedBytes + (binary ? 0 : (change.omittedBytes ?? 0))
    const allowed = Math.min(bounds.perChange, MAX_FILE_CHANGE_DIFF_BYTES, remaining)
    const fitted = bounded(`${headers(change.path, change.kind)}${body}`, omitted, allowed)
    if (fitted === undefined) return { ...base, diff_truncated: true }
    remaining -= utf8(fitted.text)
    return fitted.truncated
      ? { ...base, diff: fitted.text, diff_truncated: true }
      : { ...base, diff: fitted.text }
  })
}

/** Room left for the bridge's own redaction pass (another root may become the longer `<workdir>`). */
const PAYLOAD_SLACK = 2048
const MAX_FIT_ROUNDS = 8

/**
 * An approval whose JSON fits MAX_INTERACTION_BYTES: `build` makes it with a total diff budget;
 * while the payload is too large (JSON escaping makes a diff larger than its text), the budget
 * becomes the diff bytes actually shown minus the excess — one round usually, since each byte of
 * diff text is at least one byte of JSON — and finally no diff at all. A payload too large
 * without diffs is left for the bridge to refuse (AGENT_INTERACTION_TOO_LARGE), as before.
 */
export const fitApproval = (build: (bounds: PreviewBounds) => ApprovalPayload): ApprovalPayload => {
  const limit = MAX_INTERACTION_BYTES - PAYLOAD_SLACK
  let total = MAX_FILE_CHANGES_DIFF_BYTES
  let payload = build({ ...DEFAULT_BOUNDS, total })
  for (let round = 0; total > 0; round++) {
    const size = utf8(JSON.stringify(payload))
    if (size <= limit) return payload
    const shown = (payload.file_changes ?? []).reduce((n, c) => n + utf8(c.diff ?? ""), 0)
    total = round + 1 >= MAX_FIT_ROUNDS ? 0 : Math.max(0, Math.min(total, shown) - (size - limit))
    payload = build({ ...DEFAULT_BOUNDS, total })
  }
  return payload
}

// ---- adapters' sources -------------------------------------------------------------------------

/** A whole-file change: new (before null), deleted (after null) or rewritten. */
export const wholeFileDiff = (before: string | null, after: string | null): string =>
  hunk(before ?? "", after ?? "")
