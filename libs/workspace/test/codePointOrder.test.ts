/**
 * The contract's name order (tool-contracts §2.2) is by Unicode code point. `sortByCodePoint`
 * takes the engine's code-unit sort when no name holds a surrogate; both paths are checked here
 * against an oracle written on arrays of code points, on names drawn from every plane and on
 * names from the BMP alone (where the fast path runs), U+E000–U+FFFF included.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { compareCodePoints, sortByCodePoint } from "../src/CodePointOrder.js"
import { byCodePoint as oracle } from "./fixtures/codePoints.js"

/** Characters where the two orders part: ASCII, U+D7FF, U+E000–U+FFFF and above U+FFFF. */
const edgeChar = FastCheck.constantFrom(
  "a",
  "Z",
  "0",
  "\uD7FF",
  "\uE000",
  "\uFB01",
  "\uFFFD",
  "\uFFFF",
  "\u{10000}",
  "\u{1F600}",
  "\u{10FFFF}"
)
const name = FastCheck.oneof(
  FastCheck.string({ unit: "binary", maxLength: 6 }),
  FastCheck.array(edgeChar, { maxLength: 4 }).map((cs) => cs.join(""))
)
const bmpName = FastCheck.string({ unit: "binary", maxLength: 6 }).map((s) =>
  s.replace(/[\uD800-\uDFFF]/g, "\uE000")
)

describe("sortByCodePoint", () => {
  it("orders names from every plane as the code-point oracle does", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(name, { maxLength: 40 }), (names) => {
        expect(sortByCodePoint([...names])).toEqual(oracle(names))
      }),
      { numRuns: 2000 }
    )
  })

  it("orders BMP-only names (the code-unit path) as the oracle does", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(bmpName, { maxLength: 40 }), (names) => {
        expect(sortByCodePoint([...names])).toEqual(oracle(names))
      }),
      { numRuns: 2000 }
    )
  })

  it("puts U+1F600 after U+FFFD, where UTF-16 order puts it before", () => {
    expect(["\uFFFD", "\u{1F600}", "a"].sort()).toEqual(["a", "\u{1F600}", "\uFFFD"])
    expect(sortByCodePoint(["\uFFFD", "\u{1F600}", "a"])).toEqual(["a", "\uFFFD", "\u{1F600}"])
    expect(["\uFFFD", "\u{1F600}", "a"].sort(compareCodePoints)).toEqual(["a", "\uFFFD", "\u{1F600}"])
  })
})
