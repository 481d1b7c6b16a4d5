import * as fs from "node:fs"
import { ResourceExhausted } from "@serverfs/domain"
import { close, O } from "@serverfs/posix"
import { openDirectorySync, WalkFailure } from "./DescriptorWalk.js"
import { openRegularFileSync } from "./RegularFile.js"
import type { RawMatch } from "./Ripgrep.js"
import { decodeUtf8 } from "./TextPage.js"

/**
 * Every match ripgrep reports is confirmed through the descriptor walk before it is returned.
 *
 * ripgrep walks by path names below its (held) working directory, so a subdirectory swapped
 * for a symlink between its listing and its open would let it read outside the workdir. Each
 * reported line is therefore re-read from the file reached by an O_NOFOLLOW walk from the same
 * held directory, and returned only if that file holds exactly that text on that line: content
 * from outside the workdir can never be returned, whatever raced (docs/security-model.md).
 * A match whose text is a preview of a longer line (RawMatch.truncated) is confirmed when the
 * file's line starts with exactly that preview; only the first `keep` bytes of a
 * wanted line are held, so a 50 MB line costs no more memory than a short one.
 */
const CHUNK = 64 * 1024
const NL = 0x0a
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

interface LineHead {
  /** The first bytes of the line (at most `keep`), without "\n". */
  readonly head: Buffer
  /** The whole line's length in bytes, without "\n". */
  readonly length: number
}

/** The wanted lines' first `keep` bytes and lengths, reading no further than the last one. */
const readLines = (
  fd: number,
  wanted: ReadonlySet<number>,
  last: number,
  keep: number
): Map<number, LineHead> => {
  const found = new Map<number, LineHead>()
  const buffer = Buffer.allocUnsafe(CHUNK)
  let position = 0
  let lineNo = 1
  let current: Buffer[] = []
  let kept = 0
  let length = 0
  const done = () => {
    found.set(lineNo, { head: Buffer.concat(current, kept), length })
    current = []
    kept = 0
    length = 0
  }
  for (;;) {
    const n = fs.readSync(fd, buffer, 0, CHUNK, position)
    if (n === 0) break
    position += n
    const chunk = buffer.subarray(0, n)
    let i = 0
    while (i < n) {
      const nl = chunk.indexOf(NL, i)
      const end = nl === -1 ? n : nl
      if (wanted.has(lineNo)) {
        const take = Math.min(end - i, keep - kept)
        if (take > 0) current.push(Buffer.from(chunk.subarray(i, i + take)))
        kept += Math.max(take, 0)
        length += end - i
      }
      if (nl === -1) break
      if (wanted.has(lineNo)) done()
      if (++lineNo > last) return found
      i = nl + 1
    }
  }
  if (wanted.has(lineNo) && length > 0) done()
  return found
}

/** Whether the file's line is the match's text (or, for a preview, starts with it and is longer). */
const confirmsText = (line: LineHead, match: RawMatch, bom: boolean): boolean => {
  const head = bom ? line.head.subarray(3) : line.head
  const length = bom ? line.length - 3 : line.length
  const text = Buffer.from(match.text, "utf8")
  if (!match.truncated) return length === text.length && head.equals(text) && decodeUtf8(head) === match.text
  // ≥: a record cut just at the end of its line text is flagged as a preview without being shorter.
  return (
    length >= text.length && head.subarray(0, text.length).equals(text) && decodeUtf8(text) === match.text
  )
}

const confirmFile = (
  searchRoot: number,
  path: string,
  matches: ReadonlyArray<RawMatch>,
  keep: number
): ReadonlyArray<RawMatch> => {
  const components = path.split("/")
  if (components.some((c) => c === "" || c === "." || c === "..")) return []
  const at = { workdir: "", path }
  let parent: number
  try {
    parent = openDirectorySync(searchRoot, components.slice(0, -1), O.PATH, at)
  } catch (error) {
    // Running out of descriptors is the server's problem, not evidence against the match.
    if (error instanceof WalkFailure && !(error.error instanceof ResourceExhausted)) return []
    throw error instanceof WalkFailure ? error.error : error
  }
  try {
    const opened = openRegularFileSync(parent, components[components.length - 1]!, O.RDONLY, at)
    if (opened instanceof ResourceExhausted) throw opened
    if (!("fd" in opened)) return []
    try {
      const wanted = new Set(matches.map((m) => m.line))
      const lines = readLines(opened.fd, wanted, Math.max(...wanted), keep)
      return matches.filter((m) => {
        const line = lines.get(m.line)
        if (line === undefined) return false
        // ripgrep drops a UTF-8 BOM at the start of a file.
        return confirmsText(line, m, m.line === 1 && line.head.subarray(0, 3).equals(BOM))
      })
    } finally {
      close(opened.fd)
    }
  } finally {
    close(parent)
  }
}

/**
 * The subset of `matches` (relative to `searchRoot`) that the held tree confirms, in order.
 * `maxLineBytes` is the longest text a match carries (longer lines come as previews).
 * @throws ResourceExhausted when a match cannot be checked for lack of descriptors
 */
export const confirmMatches = (
  searchRoot: number,
  matches: ReadonlyArray<RawMatch>,
  maxLineBytes: number
): ReadonlyArray<RawMatch> => {
  // One byte more than a text can have (so a longer line is told apart) plus a BOM.
  const keep = maxLineBytes + 1 + BOM.length
  const byPath = new Map<string, RawMatch[]>()
  for (const m of matches) {
    const list = byPath.get(m.path)
    if (list === undefined) byPath.set(m.path, [m])
    else list.push(m)
  }
  const confirmed = new Set<RawMatch>()
  for (const [path, list] of byPath)
    for (const m of confirmFile(searchRoot, path, list, keep)) confirmed.add(m)
  return matches.filter((m) => confirmed.has(m))
}
