/**
 * The UTF-8 arithmetic under the spool reader and the event shrink, as properties over
 * arbitrary Unicode text (including 4-byte characters).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  boundaryAtOrBefore,
  chunkAt,
  completeCharactersEnd,
  isContinuationByte,
  utf8Prefix
} from "../src/index.js"

const unicode = fc.string({ unit: "binary", maxLength: 200 })

describe("utf8Prefix", () => {
  it.prop(
    "is the longest prefix of whole characters within the budget",
    [unicode, fc.nat(900)],
    ([text, max]) => {
      const prefix = utf8Prefix(text, max)
      const bytes = Buffer.from(text, "utf8")
      const cut = Buffer.from(prefix, "utf8")
      expect(cut.length).toBeLessThanOrEqual(max)
      expect(bytes.subarray(0, cut.length).equals(cut)).toBe(true)
      // Longest: either everything fits, or the next byte starts a character that would not.
      if (cut.length < bytes.length) expect(isContinuationByte(bytes[cut.length] ?? 0)).toBe(false)
      if (cut.length < bytes.length) expect(boundaryAtOrBefore(bytes, max)).toBe(cut.length)
    }
  )
})

describe("chunkAt", () => {
  it.prop(
    "chunks of any size reassemble the exact bytes, each a whole number of characters",
    [unicode, fc.integer({ min: 4, max: 64 })],
    ([text, max]) => {
      const bytes = Buffer.from(text, "utf8")
      const read = (offset: number, length: number) => bytes.subarray(offset, offset + length)
      const pieces: Array<Buffer> = []
      let offset = 0
      for (;;) {
        const chunk = chunkAt(bytes.length, offset, max, read)
        if (chunk instanceof Error) throw chunk
        pieces.push(Buffer.from(chunk.text, "utf8"))
        expect(chunk.next_offset_bytes - offset).toBeLessThanOrEqual(max)
        offset = chunk.next_offset_bytes
        if (chunk.eof) break
      }
      expect(Buffer.concat(pieces).equals(bytes)).toBe(true)
    }
  )

  it.prop("an offset on a continuation byte is refused", [unicode], ([text]) => {
    const bytes = Buffer.from(text, "utf8")
    const read = (offset: number, length: number) => bytes.subarray(offset, offset + length)
    for (let offset = 0; offset < bytes.length; offset++) {
      const chunk = chunkAt(bytes.length, offset, 16, read)
      const refused = chunk instanceof Error && chunk._tag === "INVALID_RESULT_OFFSET"
      expect(refused).toBe(isContinuationByte(bytes[offset] ?? 0))
    }
  })
})

describe("completeCharactersEnd", () => {
  it("cuts a trailing partial character and keeps a complete one", () => {
    const emoji = Buffer.from("a😀", "utf8") // 61 f0 9f 98 80
    for (let n = 2; n < emoji.length; n++) expect(completeCharactersEnd(emoji.subarray(0, n))).toBe(1)
    expect(completeCharactersEnd(emoji)).toBe(5)
    expect(completeCharactersEnd(Buffer.from("é", "utf8").subarray(0, 1))).toBe(0)
    expect(completeCharactersEnd(Buffer.alloc(0))).toBe(0)
  })
})
