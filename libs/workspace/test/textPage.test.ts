/**
 * The paging algorithm of read_text_file (tool-contracts §2.5) against a model written on whole
 * lines, on files read in many chunks: `readPage` sizes its read buffer from the size hint it is
 * given, so a small hint makes a page cross chunk boundaries anywhere — inside a line, at a
 * newline, inside the lines skipped before the window, inside the line after a full page.
 */
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { type PageRequest, type PageResult, readPage } from "../src/TextPage.js"

const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/** The contract, on whole lines: skip to start_line, then fill the page line by line. */
const model = (file: Buffer, request: PageRequest): PageResult => {
  if (file.subarray(0, 1024).includes(0)) return { _tag: "binary" }
  const text = request.startLine === 1 && file.subarray(0, 3).equals(BOM) ? file.subarray(3) : file
  const lines: Buffer[] = []
  let from = 0
  while (from < text.length) {
    const nl = text.indexOf(0x0a, from)
    const end = nl === -1 ? text.length : nl + 1
    lines.push(text.subarray(from, end))
    from = end
  }
  const page: Buffer[] = []
  let bytes = 0
  for (let index = request.startLine - 1; index < lines.length; index++) {
    const line = lines[index]!
    if (line.length > request.maxBytes) return { _tag: "line-too-large", line: index + 1 }
    if (page.length >= request.maxLines || bytes + line.length > request.maxBytes)
      return { _tag: "page", bytes: Buffer.concat(page), lineCount: page.length, hasMore: true }
    page.push(line)
    bytes += line.length
  }
  return { _tag: "page", bytes: Buffer.concat(page), lineCount: page.length, hasMore: false }
}

/**
 * Lines of 0–300 bytes, some without a final newline, CRLFs, a BOM; a NUL now and then. Or lines
 * of one power-of-two length, so that chunks of a power-of-two size end exactly at newlines.
 */
const lineArbitrary = FastCheck.record({
  length: FastCheck.oneof(FastCheck.integer({ min: 0, max: 40 }), FastCheck.integer({ min: 0, max: 300 })),
  ending: FastCheck.constantFrom("\n", "\n", "\n", "\r\n")
})
const uniformLines = FastCheck.tuple(FastCheck.constantFrom(8, 16, 64), FastCheck.nat(160)).map(
  ([length, count]) => Array.from({ length: count }, () => ({ length: length - 1, ending: "\n" }))
)
const fileArbitrary = FastCheck.record({
  bom: FastCheck.boolean(),
  lines: FastCheck.oneof(FastCheck.array(lineArbitrary, { maxLength: 120 }), uniformLines),
  noFinalNewline: FastCheck.boolean(),
  nulAt: FastCheck.option(FastCheck.nat(3000), { freq: 8 })
}).map(({ bom, lines, noFinalNewline, nulAt }) => {
  const parts = lines.map(({ length, ending }, i) => Buffer.from(`${String(i % 10).repeat(length)}${ending}`))
  if (noFinalNewline && parts.length > 0) parts.push(Buffer.from("tail"))
  const file = Buffer.concat([bom ? BOM : Buffer.alloc(0), ...parts])
  if (nulAt !== null && nulAt < file.length) file[nulAt] = 0
  return file
})

let base = ""
beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-textpage-"))
})
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

describe("readPage in chunks", () => {
  it("returns the model's page whatever the chunk size, start line and bounds", async () => {
    let run = 0
    await FastCheck.assert(
      FastCheck.asyncProperty(
        fileArbitrary,
        FastCheck.integer({ min: 1, max: 170 }),
        FastCheck.integer({ min: 1, max: 150 }),
        FastCheck.integer({ min: 1, max: 20_000 }),
        // The read buffer is max(1024, min(256 KiB, hint + 1)) bytes: 1024, 2048 or 4096 with these.
        FastCheck.oneof(FastCheck.integer({ min: 0, max: 6_000 }), FastCheck.constantFrom(1023, 2047, 4095)),
        async (file, startLine, maxLines, maxBytes, sizeHint) => {
          const name = path.join(base, `f${run++}`)
          fs.writeFileSync(name, file)
          const fd = fs.openSync(name, "r")
          try {
            const request = { startLine, maxLines, maxBytes, maxScanBytes: file.length + 1 }
            const page = await Effect.runPromise(readPage(fd, sizeHint, { ...request, timeoutSeconds: 60 }))
            expect(page).toEqual(model(file, request))
          } finally {
            fs.closeSync(fd)
            fs.rmSync(name)
          }
        }
      ),
      { numRuns: 400 }
    )
  })

  it("a file of one line longer than every chunk is read whole", async () => {
    const file = Buffer.from(`${"a".repeat(10_000)}\nb\n`)
    const name = path.join(base, "long")
    fs.writeFileSync(name, file)
    const fd = fs.openSync(name, "r")
    try {
      const request = { startLine: 1, maxLines: 5, maxBytes: 20_000, maxScanBytes: file.length + 1 }
      const page = await Effect.runPromise(readPage(fd, 0, { ...request, timeoutSeconds: 60 }))
      expect(page).toEqual({ _tag: "page", bytes: file, lineCount: 2, hasMore: false })
    } finally {
      fs.closeSync(fd)
    }
  })
})
