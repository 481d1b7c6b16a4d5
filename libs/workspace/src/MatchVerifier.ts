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
 */
const CHUNK = 64 * 1024
const NL = 0x0a
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/** The bytes (without "\n") of the wanted line numbers, reading no further than the last one. */
const readLines = (fd: number, wanted: ReadonlySet<number>, last: number): Map<number, Buffer> => {
  const found = new Map<number, Buffer>()
  const buffer = Buffer.allocUnsafe(CHUNK)
  let position = 0
  let lineNo = 1
  let current: Buffer[] = []
  for (;;) {
    const n = fs.readSync(fd, buffer, 0, CHUNK, position)
    if (n === 0) break
    position += n
    const chunk = buffer.subarray(0, n)
    let i = 0
    while (i < n) {
      const nl = chunk.indexOf(NL, i)
      const end = nl === -1 ? n : nl
      if (wanted.has(lineNo)) current.push(Buffer.from(chunk.subarray(i, end)))
      if (nl === -1) break
      if (wanted.has(lineNo)) found.set(lineNo, Buffer.concat(current))
      current = []
      if (++lineNo > last) return found
      i = nl + 1
    }
  }
  if (wanted.has(lineNo) && current.length > 0) found.set(lineNo, Buffer.concat(current))
  return found
}

const confirmFile = (
  searchRoot: number,
  path: string,
  matches: ReadonlyArray<RawMatch>
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
      const lines = readLines(opened.fd, wanted, Math.max(...wanted))
      return matches.filter((m) => {
        let bytes = lines.get(m.line)
        if (bytes === undefined) return false
        // ripgrep drops a UTF-8 BOM at the start of a file.
        if (m.line === 1 && bytes.subarray(0, 3).equals(BOM)) bytes = bytes.subarray(3)
        return decodeUtf8(bytes) === m.text
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
 * @throws ResourceExhausted when a match cannot be checked for lack of descriptors
 */
export const confirmMatches = (
  searchRoot: number,
  matches: ReadonlyArray<RawMatch>
): ReadonlyArray<RawMatch> => {
  const byPath = new Map<string, RawMatch[]>()
  for (const m of matches) {
    const list = byPath.get(m.path)
    if (list === undefined) byPath.set(m.path, [m])
    else list.push(m)
  }
  const confirmed = new Set<RawMatch>()
  for (const [path, list] of byPath) for (const m of confirmFile(searchRoot, path, list)) confirmed.add(m)
  return matches.filter((m) => confirmed.has(m))
}
