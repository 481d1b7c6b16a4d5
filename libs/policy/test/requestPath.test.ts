import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { joinComponents, type NormalizedPath, normalizeRequestPath } from "@serverfs/policy"
import { FastCheck } from "effect"

const ok = (...components: string[]): NormalizedPath => ({ _tag: "ok", components })
const outside: NormalizedPath = { _tag: "outside" }
const nul: NormalizedPath = { _tag: "nul" }

describe("normalizeRequestPath (tool-contracts §5 steps 1–4)", () => {
  const cases: ReadonlyArray<readonly [raw: string, expected: NormalizedPath, why: string]> = [
    // 1. NUL
    ["a\0b", nul, "a NUL anywhere is refused"],
    ["\0", nul, "a lone NUL is refused"],
    ["/etc/\0", nul, "NUL is checked before the absolute-path rule"],
    ["../\0", nul, "NUL is checked before the escape rule"],
    // 2. absolute and home-relative
    ["/abs", outside, "an absolute path is outside"],
    ["/", outside, "the filesystem root is outside"],
    ["//a", outside, "a doubled leading slash is outside"],
    ["~", outside, "a bare ~ is outside"],
    ["~/x", outside, "a home-relative path is outside"],
    ["~user/x", outside, "another user's home is outside"],
    // 4. dot-dot
    ["..", outside, "popping past the root is outside"],
    ["../a", outside, "a leading .. is outside"],
    ["a/../../b", outside, "popping past the root in the middle is outside"],
    ["a/b/../../..", outside, "popping past the root at the end is outside"],
    ["a/../..", outside, "popping past the root once the stack is empty"],
    ["foo/../bar.txt", ok("bar.txt"), "foo/../bar.txt becomes bar.txt"],
    ["sub/./../sub", ok("sub"), "sub/./../sub becomes sub"],
    ["a/b/..", ok("a"), "a trailing .. pops"],
    ["a/..", ok(), "a/.. is the root"],
    // 3. backslash is an ordinary character
    ["..\\..\\etc", ok("..\\..\\etc"), "..\\..\\etc is ONE component"],
    ["a\\b/c", ok("a\\b", "c"), "only / separates"],
    // "" and "." segments
    ["", ok(), "the empty path is the root"],
    [".", ok(), ". is the root"],
    ["./", ok(), "./ is the root"],
    ["././.", ok(), "several dots are the root"],
    ["a/", ok("a"), "a trailing slash is dropped"],
    ["a//b", ok("a", "b"), "repeated slashes collapse"],
    ["a///b//", ok("a", "b"), "repeated slashes collapse, trailing ones too"],
    ["./a/./b/.", ok("a", "b"), "inner dots are dropped"],
    // names that merely look special
    ["...", ok("..."), "... is a name"],
    ["a/.../b", ok("a", "...", "b"), "... is a name in the middle"],
    ["a~", ok("a~"), "a ~ that is not leading is a name"],
    ["a/~b", ok("a", "~b"), "a ~ at the start of an inner component is a name"],
    [".hidden/x", ok(".hidden", "x"), "hidden names are the policy's business, not normalization's"],
    [" a /b ", ok(" a ", "b "), "spaces are kept"],
    ["\u{1F600}/é", ok("\u{1F600}", "é"), "non-ASCII names are kept"]
  ]

  it.each(cases)("%j → %j (%s)", (raw, expected) => {
    expect(normalizeRequestPath(raw)).toEqual(expected)
  })

  it("joinComponents is the normalized relative path ('' for the root)", () => {
    expect(joinComponents(["a", "b"])).toBe("a/b")
    expect(joinComponents([])).toBe("")
  })
})

// ---------------------------------------------------------------------------------------------
// Property: whatever the segments, the result is clean and never escapes the root.
// ---------------------------------------------------------------------------------------------

const SEGMENTS = [
  "",
  ".",
  "..",
  "a",
  "b",
  "...",
  ".a",
  "a.",
  "\\",
  "..\\..",
  "~",
  "x y",
  "\u{1F600}"
] as const

const relativeRawArb = FastCheck.array(FastCheck.constantFrom(...SEGMENTS), { maxLength: 10 })
  .map((segments) => segments.join("/"))
  .filter((raw) => !raw.startsWith("/") && !raw.startsWith("~"))

describe("normalizeRequestPath: properties", () => {
  it("an 'ok' result never holds '', '.' or '..' components", () => {
    FastCheck.assert(
      FastCheck.property(relativeRawArb, (raw) => {
        const result = normalizeRequestPath(raw)
        if (result._tag !== "ok") return true
        return result.components.every((c) => c !== "" && c !== "." && c !== ".." && !c.includes("/"))
      }),
      { numRuns: 2000 }
    )
  })

  it("agrees with a lexical POSIX normalization: outside iff the path climbs above the root", () => {
    FastCheck.assert(
      FastCheck.property(relativeRawArb, (raw) => {
        const result = normalizeRequestPath(raw)
        const lexical = raw === "" ? "." : path.posix.normalize(raw)
        const climbs = lexical === ".." || lexical.startsWith("../")
        if (climbs) return result._tag === "outside"
        if (result._tag !== "ok") return false
        const expected = lexical === "." || lexical === "./" ? "" : lexical.replace(/\/$/, "")
        return joinComponents(result.components) === expected
      }),
      { numRuns: 3000 }
    )
  })

  it("an 'ok' result resolved under a root always stays inside that root", () => {
    const root = "/srv/workdir"
    FastCheck.assert(
      FastCheck.property(relativeRawArb, (raw) => {
        const result = normalizeRequestPath(raw)
        if (result._tag !== "ok") return true
        const resolved = path.posix.resolve(root, ...result.components)
        return resolved === root || resolved.startsWith(`${root}/`)
      }),
      { numRuns: 2000 }
    )
  })

  it("any string starting with / or ~ is outside (unless it holds a NUL)", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.constantFrom("/", "~"), FastCheck.string(), (lead, rest) => {
        const result = normalizeRequestPath(lead + rest)
        return rest.includes("\0") ? result._tag === "nul" : result._tag === "outside"
      }),
      { numRuns: 1000 }
    )
  })

  it("any string holding a NUL is 'nul', whatever else it holds", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.string(), FastCheck.string(), (before, after) => {
        return normalizeRequestPath(`${before}\0${after}`)._tag === "nul"
      }),
      { numRuns: 1000 }
    )
  })
})
