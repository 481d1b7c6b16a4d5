/**
 * The edit planner (EditPlan.ts) against a naive reference: the previous string algorithm
 * (indexOf counting, split/join), plus the per-step size bound, on small random texts and edit
 * lists over a tiny alphabet — so overlapping patterns ("aa" in "aaaa") and multi-byte
 * characters (2- and 4-byte UTF-8, a surrogate pair in UTF-16) come up all the time.
 */
import { isUtf8 } from "node:buffer"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { applyEdits, decodeUtf8, type EditOutcome, type PlannedEdit } from "../../src/index.js"

type Outcome =
  | { readonly _tag: "applied"; readonly text: string }
  | { readonly _tag: "conflict"; readonly detail: string }
  | { readonly _tag: "tooLarge"; readonly edit: number }

const countOccurrences = (text: string, needle: string): number => {
  let count = 0
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

/** The reference: strings, indexOf, split/join; each step's UTF-8 size checked after it is built. */
const naive = (original: string, edits: ReadonlyArray<PlannedEdit>, limit: number): Outcome => {
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
    } else {
      const found = countOccurrences(text, edit.old_text)
      if (found !== edit.expected_count) {
        return {
          _tag: "conflict",
          detail: `${which}expected ${edit.expected_count} occurrence(s), found ${found}`
        }
      }
      text = text.split(edit.old_text).join(edit.new_text)
    }
    if (Buffer.byteLength(text, "utf8") > limit) return { _tag: "tooLarge", edit: index + 1 }
  }
  return { _tag: "applied", text }
}

const planned = (original: string, edits: ReadonlyArray<PlannedEdit>, limit: number): Outcome => {
  const outcome: EditOutcome = applyEdits(Buffer.from(original, "utf8"), edits, limit)
  return outcome._tag === "applied"
    ? { _tag: "applied", text: Buffer.from(outcome.bytes).toString("utf8") }
    : outcome
}

/**
 * Edits whose expected_count is either arbitrary or ("exact") the true count in the reference's
 * working text at that step, so that long chains succeed often enough to be interesting.
 */
const withCounts = (
  original: string,
  drafts: ReadonlyArray<{ old_text: string; new_text: string; count: number | "exact" }>
): ReadonlyArray<PlannedEdit> => {
  let text = original
  return drafts.map((d) => {
    const exact = d.old_text === "" ? 1 : Math.max(1, countOccurrences(text, d.old_text))
    const edit = {
      old_text: d.old_text,
      new_text: d.new_text,
      expected_count: d.count === "exact" ? exact : d.count
    }
    if (d.old_text === "") {
      if (text === "") text = d.new_text
    } else {
      text = text.split(d.old_text).join(d.new_text)
    }
    return edit
  })
}

const textOver = (letters: ReadonlyArray<string>, maxLength: number) =>
  fc.array(fc.constantFrom(...letters), { maxLength }).map((units) => units.join(""))

const scenario = (letters: ReadonlyArray<string>) =>
  fc.record({
    text: textOver(letters, 24),
    drafts: fc.array(
      fc.record({
        old_text: textOver(letters, 4),
        new_text: textOver(letters, 5),
        count: fc.oneof(fc.constant<"exact">("exact"), fc.integer({ min: 1, max: 6 }))
      }),
      { minLength: 1, maxLength: 6 }
    ),
    limit: fc.oneof(fc.constant(1_000_000), fc.integer({ min: 0, max: 60 }))
  })

describe("the edit planner agrees with the naive reference", () => {
  it.prop(
    "two letters (overlaps everywhere)",
    [scenario(["a", "b"])],
    ([s]) => {
      const edits = withCounts(s.text, s.drafts)
      expect(planned(s.text, edits, s.limit)).toEqual(naive(s.text, edits, s.limit))
    },
    { fastCheck: { numRuns: 3000 } }
  )

  it.prop(
    "multi-byte letters: é (2 bytes), 😀 (4 bytes, a surrogate pair)",
    [scenario(["a", "é", "😀"])],
    ([s]) => {
      const edits = withCounts(s.text, s.drafts)
      expect(planned(s.text, edits, s.limit)).toEqual(naive(s.text, edits, s.limit))
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it("overlapping patterns are counted leftmost, non-overlapping", () => {
    const one = (text: string, old_text: string, expected_count: number) =>
      planned(text, [{ old_text, new_text: "X", expected_count }], 100)
    expect(one("aaaa", "aa", 2)).toEqual({ _tag: "applied", text: "XX" })
    expect(one("aaa", "aa", 2)).toEqual({ _tag: "conflict", detail: "expected 2 occurrence(s), found 1" })
    expect(one("aaa", "aa", 1)).toEqual({ _tag: "applied", text: "Xa" })
    expect(one("abababa", "aba", 2)).toEqual({ _tag: "applied", text: "XbX" })
    expect(one("aabaabaa", "aabaa", 1)).toEqual({ _tag: "applied", text: "Xbaa" })
  })

  it("a step over the limit is refused even when a later edit would shrink it back", () => {
    const edits = [
      { old_text: "a", new_text: "aa", expected_count: 4 },
      { old_text: "aa", new_text: "a", expected_count: 4 }
    ]
    expect(planned("aaaa", edits, 7)).toEqual({ _tag: "tooLarge", edit: 1 })
    expect(planned("aaaa", edits, 8)).toEqual({ _tag: "applied", text: "aaaa" })
  })

  it("the size bound is in UTF-8 bytes: exactly the limit is accepted", () => {
    const edits = [{ old_text: "a", new_text: "😀", expected_count: 2 }]
    expect(planned("aa", edits, 8)).toEqual({ _tag: "applied", text: "😀😀" })
    expect(planned("aa", edits, 7)).toEqual({ _tag: "tooLarge", edit: 1 })
  })
})

describe("the edit's UTF-8 validation", () => {
  // edit_text_file validates with isUtf8 instead of decoding; it must accept exactly what the
  // strict decoder of the read channels accepts (overlong forms, surrogates, > U+10FFFF, cut
  // sequences all refused), so UNSUPPORTED_TEXT_ENCODING means the same thing everywhere.
  const interesting = fc.constantFrom(
    0x00,
    0x41,
    0x7f,
    0x80,
    0xbf,
    0xc0,
    0xc1,
    0xc2,
    0xdf,
    0xe0,
    0xed,
    0xef,
    0xf0,
    0xf4,
    0xf5,
    0xff,
    0xa0,
    0x9f,
    0x90,
    0x8f
  )
  it.prop(
    "isUtf8 agrees with the strict decoder on arbitrary bytes",
    [fc.array(fc.oneof(interesting, fc.integer({ min: 0, max: 255 })), { maxLength: 12 })],
    ([bytes]) => {
      const buffer = Buffer.from(bytes)
      expect(isUtf8(buffer)).toBe(decodeUtf8(buffer) !== undefined)
    },
    { fastCheck: { numRuns: 20000 } }
  )
})
