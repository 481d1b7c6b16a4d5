/**
 * ripgrep's `--json` stream split into match records in linear time and bounded memory
 * (issue 14: re-splitting a growing string per chunk was quadratic in the line length, and a
 * whole record was held however long the matched line was).
 *
 * - Chunks stay Buffers; only the new bytes are searched for "\n".
 * - A record is buffered whole only up to `maxRecordBytes`. A longer one (a minified bundle, a
 *   line of a million matches) keeps just its first `maxRecordBytes` bytes and is otherwise
 *   skipped to its newline, while its `"line_number":` is picked out of the passing bytes.
 *   rg writes a match as `{"type":"match","data":{"path":{…},"lines":{"text":…},"line_number":N,
 *   "absolute_offset":…,"submatches":[…]}}`: the path and the start of the line are in the kept
 *   prefix, the line number follows the (possibly huge) line text. The key `"line_number":` cannot
 *   occur inside a JSON string (a quote there is escaped), so its first occurrence is the field.
 * - The matched line is returned as a preview of at most `maxLineBytes` bytes cut on a UTF-8
 *   character boundary, flagged `truncated`, never dropped.
 */
export interface RawMatch {
  /** Path relative to the search root, "/"-separated, without the leading "./". */
  readonly path: string
  readonly line: number
  /** The matched line without its final "\n" (a "\r" is kept); a prefix of it when truncated. */
  readonly text: string
  /** True when `text` is only the first bytes of a longer line. */
  readonly truncated: boolean
}

export type RecordEvent = RawMatch | "summary" | undefined

const NL = 0x0a
const MATCH_HEAD = '{"type":"match","data":{"path":{"text":'
const LINES_KEY = ',"lines":{"text":'
const LINE_NUMBER_KEY = Buffer.from('"line_number":')
/** The key, up to 16 digits and a delimiter always fit in this much carried-over tail. */
const TAIL = 64

/** Headroom of a kept record prefix beyond the escaped preview: the record head and a path. */
const PATH_HEADROOM = 64 * 1024

/** The longest record kept whole for a preview of `maxLineBytes` (JSON escapes need ≤ 6 bytes). */
export const maxRecordBytesFor = (maxLineBytes: number): number => 6 * maxLineBytes + PATH_HEADROOM

/** The largest k ≤ n at which `bytes` can be cut without splitting a UTF-8 sequence. */
const utf8Boundary = (bytes: Uint8Array, n: number): number => {
  if (n >= bytes.length) return bytes.length
  let k = n
  while (k > 0 && (bytes[k]! & 0xc0) === 0x80) k--
  return k
}

/** The length of `bytes` without a UTF-8 sequence cut short at its end. */
const wholeUtf8Length = (bytes: Uint8Array): number => {
  let lead = bytes.length - 1
  while (lead > 0 && bytes.length - lead < 4 && (bytes[lead]! & 0xc0) === 0x80) lead--
  if (lead < 0) return 0
  const b = bytes[lead]!
  const size = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1
  return lead + size > bytes.length ? lead : bytes.length
}

/** At most `maxBytes` UTF-8 bytes of `text`, cut on a character boundary. */
export const previewOf = (
  text: string,
  maxBytes: number
): { readonly text: string; readonly cut: boolean } => {
  // Fast path: even at 3 bytes per UTF-16 unit the text fits.
  if (text.length * 3 <= maxBytes) return { text, cut: false }
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= maxBytes) return { text, cut: false }
  return { text: bytes.subarray(0, utf8Boundary(bytes, maxBytes)).toString("utf8"), cut: true }
}

const stripDotSlash = (path: string): string => (path.startsWith("./") ? path.slice(2) : path)

interface JsonText {
  readonly text?: string
}
interface JsonMatch {
  readonly type: string
  readonly data?: { readonly path?: JsonText; readonly lines?: JsonText; readonly line_number?: number }
}

/** One whole line of rg's JSON stream: a match, the final summary, or something to ignore. */
export const parseRecord = (line: string, maxLineBytes: number): RecordEvent => {
  let record: JsonMatch
  try {
    record = JSON.parse(line) as JsonMatch
  } catch {
    return undefined
  }
  if (record.type === "summary") return "summary"
  if (record.type !== "match") return undefined
  // Non-UTF-8 paths and lines arrive as `bytes` instead of `text`: they are dropped.
  const path = record.data?.path?.text
  const text = record.data?.lines?.text
  const lineNumber = record.data?.line_number
  if (typeof path !== "string" || typeof text !== "string" || typeof lineNumber !== "number") return undefined
  const preview = previewOf(text.endsWith("\n") ? text.slice(0, -1) : text, maxLineBytes)
  return { path: stripDotSlash(path), line: lineNumber, text: preview.text, truncated: preview.cut }
}

/**
 * A JSON string literal starting at `start` (its opening quote), possibly cut short by the end of
 * `s`: the literal closed where it was cut (never inside an escape), and whether it was complete.
 */
const jsonStringAt = (
  s: string,
  start: number
): { readonly value: string; readonly complete: boolean; readonly end: number } | undefined => {
  if (s[start] !== '"') return undefined
  let i = start + 1
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c === 0x22) {
      try {
        return { value: JSON.parse(s.slice(start, i + 1)) as string, complete: true, end: i + 1 }
      } catch {
        return undefined
      }
    }
    if (c === 0x5c) {
      const step = s[i + 1] === "u" ? 6 : 2
      if (i + step > s.length) break
      i += step
    } else {
      i++
    }
  }
  try {
    let value = JSON.parse(`${s.slice(start, i)}"`) as string
    // A surrogate pair cut in half: drop the lone high surrogate.
    const last = value.charCodeAt(value.length - 1)
    if (last >= 0xd800 && last <= 0xdbff) value = value.slice(0, -1)
    return { value, complete: false, end: i }
  } catch {
    return undefined
  }
}

/** A match from the kept prefix of an oversized record and the line number seen after it. */
export const parseOversized = (
  prefix: Buffer,
  lineNumber: number | undefined,
  maxLineBytes: number
): RecordEvent => {
  if (lineNumber === undefined) return undefined
  const s = prefix.subarray(0, wholeUtf8Length(prefix)).toString("utf8")
  if (!s.startsWith(MATCH_HEAD)) return undefined
  const path = jsonStringAt(s, MATCH_HEAD.length)
  if (path === undefined || !path.complete || !s.startsWith(LINES_KEY, path.end + 1)) return undefined
  const text = jsonStringAt(s, path.end + 1 + LINES_KEY.length)
  if (text === undefined) return undefined
  // A line's only "\n" is its terminator, even when the closing quote was cut off.
  const full = text.value.endsWith("\n") ? text.value.slice(0, -1) : text.value
  const preview = previewOf(full, maxLineBytes)
  return {
    path: stripDotSlash(path.value),
    line: lineNumber,
    text: preview.text,
    truncated: preview.cut || !text.complete
  }
}

/** The splitter: feed it rg's stdout chunks; it hands each record's event to `emit`. */
export class RecordSplitter {
  private parts: Buffer[] = []
  private partsLength = 0
  /** Set while the current record is longer than `maxRecordBytes`. */
  private oversized: { prefix: Buffer; tail: Buffer; lineNumber: number | undefined } | undefined

  constructor(
    private readonly maxLineBytes: number,
    private readonly emit: (event: RecordEvent) => void,
    private readonly maxRecordBytes = maxRecordBytesFor(maxLineBytes)
  ) {}

  push(chunk: Buffer): void {
    let i = 0
    while (i < chunk.length) {
      const nl = chunk.indexOf(NL, i)
      this.append(chunk.subarray(i, nl === -1 ? chunk.length : nl))
      if (nl === -1) return
      this.completeRecord()
      i = nl + 1
    }
  }

  /** End of stream: a last record without its newline. */
  end(): void {
    if (this.partsLength > 0 || this.oversized !== undefined) this.completeRecord()
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return
    if (this.oversized !== undefined) {
      this.scanLineNumber(piece)
      return
    }
    if (this.partsLength + piece.length <= this.maxRecordBytes) {
      this.parts.push(piece)
      this.partsLength += piece.length
      return
    }
    const keep = this.maxRecordBytes - this.partsLength
    const prefix = Buffer.concat([...this.parts, piece.subarray(0, keep)], this.maxRecordBytes)
    this.parts = []
    this.partsLength = 0
    this.oversized = { prefix, tail: Buffer.alloc(0), lineNumber: undefined }
    this.scanLineNumber(prefix)
    this.scanLineNumber(piece.subarray(keep))
  }

  /** Look for `"line_number":N` in passing bytes, carrying a short tail across chunk borders. */
  private scanLineNumber(bytes: Buffer): void {
    const state = this.oversized!
    if (state.lineNumber !== undefined) return
    const window = state.tail.length === 0 ? bytes : Buffer.concat([state.tail, bytes])
    const at = window.indexOf(LINE_NUMBER_KEY)
    if (at !== -1) {
      let i = at + LINE_NUMBER_KEY.length
      let value = 0
      while (i < window.length && window[i]! >= 0x30 && window[i]! <= 0x39)
        value = value * 10 + (window[i++]! - 0x30)
      // Digits running to the window's end may continue in the next chunk: the tail keeps them.
      if (i < window.length && i > at + LINE_NUMBER_KEY.length) {
        state.lineNumber = value
        return
      }
    }
    state.tail = Buffer.from(window.subarray(Math.max(0, window.length - TAIL)))
  }

  private completeRecord(): void {
    const oversized = this.oversized
    if (oversized !== undefined) {
      this.oversized = undefined
      this.emit(parseOversized(oversized.prefix, oversized.lineNumber, this.maxLineBytes))
      return
    }
    const record = Buffer.concat(this.parts, this.partsLength)
    this.parts = []
    this.partsLength = 0
    if (record.length > 0) this.emit(parseRecord(record.toString("utf8"), this.maxLineBytes))
  }
}
