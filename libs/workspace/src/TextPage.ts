import * as fs from "node:fs"

/**
 * The paging algorithm of read_text_file (tool-contracts §2.5), streaming over an fd so memory
 * stays bounded by one page whatever the file size:
 *
 * - a NUL in the first 1024 bytes → binary, whatever the start line;
 * - lines split on "\n" with terminators kept; lines before `startLine` are skipped unchecked;
 * - a UTF-8 BOM is removed from the physical first line only;
 * - a line in the window (including the one just after a full page) longer than `maxBytes` →
 *   line too large;
 * - the page ends (has_more) at `maxLines` lines, or when the next line would push it past
 *   `maxBytes`.
 */
export interface PageRequest {
  readonly startLine: number
  readonly maxLines: number
  readonly maxBytes: number
}

export type PageResult =
  | {
      readonly _tag: "page"
      readonly bytes: Buffer
      readonly lineCount: number
      readonly hasMore: boolean
    }
  | { readonly _tag: "binary" }
  | { readonly _tag: "line-too-large"; readonly line: number }

const BINARY_PROBE = 1024
const CHUNK = 64 * 1024
const NL = 0x0a
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/** Read until `buffer` is full or EOF; returns the byte count (short reads are retried). */
const readFully = (fd: number, buffer: Buffer, position: number): number => {
  let filled = 0
  while (filled < buffer.length) {
    const n = fs.readSync(fd, buffer, filled, buffer.length - filled, position + filled)
    if (n === 0) break
    filled += n
  }
  return filled
}

export const readPage = (fd: number, sizeHint: number, request: PageRequest): PageResult => {
  const { startLine, maxLines, maxBytes } = request
  const buffer = Buffer.allocUnsafe(Math.max(BINARY_PROBE, Math.min(CHUNK, sizeHint + 1)))
  let position = 0
  let lineNo = 1
  let current: Buffer[] = []
  let currentLength = 0
  const lines: Buffer[] = []
  let pageBytes = 0
  let first = true

  // Completes the current window line; returns false when the page is full (has_more).
  const complete = (): boolean => {
    if (lines.length >= maxLines || pageBytes + currentLength > maxBytes) return false
    lines.push(current.length === 1 ? current[0]! : Buffer.concat(current, currentLength))
    pageBytes += currentLength
    current = []
    currentLength = 0
    return true
  }

  for (;;) {
    const n = readFully(fd, buffer, position)
    if (n === 0) break
    let chunk = buffer.subarray(0, n)
    position += n
    if (first) {
      first = false
      if (chunk.subarray(0, BINARY_PROBE).includes(0)) return { _tag: "binary" }
      if (startLine === 1 && chunk.subarray(0, 3).equals(BOM)) chunk = chunk.subarray(3)
    }
    let i = 0
    while (i < chunk.length) {
      const nl = chunk.indexOf(NL, i)
      const end = nl === -1 ? chunk.length : nl + 1
      if (lineNo >= startLine) {
        const piece = chunk.subarray(i, end)
        currentLength += piece.length
        if (currentLength > maxBytes) return { _tag: "line-too-large", line: lineNo }
        // Copy: the read buffer is reused for the next chunk.
        current.push(Buffer.from(piece))
        if (nl !== -1) {
          if (!complete())
            return {
              _tag: "page",
              bytes: Buffer.concat(lines, pageBytes),
              lineCount: lines.length,
              hasMore: true
            }
          lineNo++
        }
      } else if (nl !== -1) {
        lineNo++
      }
      i = end
    }
  }
  // A last line without a final newline.
  if (currentLength > 0 && !complete()) {
    return { _tag: "page", bytes: Buffer.concat(lines, pageBytes), lineCount: lines.length, hasMore: true }
  }
  return { _tag: "page", bytes: Buffer.concat(lines, pageBytes), lineCount: lines.length, hasMore: false }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Strict UTF-8 decoding: undefined when the bytes are not valid UTF-8. BOMs are kept as data. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}
