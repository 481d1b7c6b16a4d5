/**
 * issue 14, items 5 and 6: search_text answers are bounded in bytes and rg's output is parsed in
 * linear time and bounded memory. Six files of one 1 MiB line each used to produce a response
 * over 10 MiB (the SDK client refused it and the server exited); a 20 MB matched line cost 4.7 s
 * of quadratic re-splitting. Long lines now come back as previews marked text_truncated, never
 * dropped, and the matches stop with truncated=true at the response budget.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type RawMatch, RecordSplitter } from "../src/RipgrepRecords.js"
import { type Vars, withChannels, workdirVars } from "./fixtures/channels.js"
import { makeBase, removeBase } from "./fixtures/tree.js"

const MiB = 1024 * 1024

let base = ""
let root = ""
let vars: Vars = {}

beforeAll(() => {
  base = makeBase("serverfs-ws-searchlimits-")
  root = path.join(base, "wd")
  fs.mkdirSync(path.join(root, "wide"), { recursive: true })
  fs.mkdirSync(path.join(root, "huge"))
  fs.mkdirSync(path.join(root, "many"))
  fs.mkdirSync(path.join(root, "dense"))
  fs.mkdirSync(path.join(root, "multi"))
  // Six minified bundles: one 1 MiB line each, the needle at its start.
  for (let i = 0; i < 6; i++)
    fs.writeFileSync(path.join(root, "wide", `bundle${i}.js`), `needle${"é".repeat(MiB / 2)}\n`)
  // One 20 MB line with a single match at its end.
  fs.writeFileSync(
    path.join(root, "huge", "big.txt"),
    `first\n${"x".repeat(20 * 1000 * 1000)}needle\nlast needle\n`
  )
  // 40 files with a 3000-byte matched line each: 120 kB of matches.
  for (let i = 0; i < 40; i++)
    fs.writeFileSync(
      path.join(root, "many", `f${String(i).padStart(2, "0")}.txt`),
      `needle ${"m".repeat(2993)}\n`
    )
  // A 2 MB line that matches 400,000 times: rg's record for it is over 20 MB of submatches.
  fs.writeFileSync(path.join(root, "dense", "d.txt"), `a\nb\n${"ab c ".repeat(400_000)}\nend ab\n`)
  // A multi-byte character straddling the preview cut.
  fs.writeFileSync(path.join(root, "multi", "m.txt"), `${"a".repeat(4095)}😀tail needle\n`)
  vars = workdirVars(root)
})

afterAll(() => removeBase(base))

const bytes = (s: string) => Buffer.byteLength(s)

describe("search_text response bounds", () => {
  it.effect("six 1 MiB matched lines → six previews marked text_truncated, a bounded response", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const result = yield* a.search("wd", "needle", "wide")
        expect(result.returned).toBe(6)
        expect(result.truncated).toBe(false)
        for (const m of result.matches) {
          expect(m.text_truncated).toBe(true)
          expect(m.text.startsWith("needleé")).toBe(true)
          expect(bytes(m.text)).toBeLessThanOrEqual(4096)
          // Cut on a character boundary: no replacement character, no split "é".
          expect(m.text.endsWith("é") || m.text.endsWith("e")).toBe(true)
        }
        expect(bytes(JSON.stringify(result))).toBeLessThan(64 * 1024)
      })
    )
  )

  it.effect("short lines carry no text_truncated field", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const result = yield* a.search("wd", "end ab", "dense")
        expect(result.matches).toEqual([{ path: "dense/d.txt", line: 4, text: "end ab" }])
      })
    )
  )

  it.live("a 20 MB matched line is parsed in linear time and previewed", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const started = Date.now()
        const result = yield* a.search("wd", "needle", "huge")
        // Liveness only: the quadratic parser took 4.7 s here, a 50 MB line hit the timeout.
        expect(Date.now() - started).toBeLessThan(10_000)
        expect(result.matches.map((m) => [m.line, m.text_truncated ?? false])).toEqual([
          [2, true],
          [3, false]
        ])
        expect(result.matches[0]!.text).toBe("x".repeat(4096))
      })
    )
  )

  it.live("a line of 400,000 matches (a record of tens of MB) keeps its line number", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const result = yield* a.search("wd", "ab", "dense")
        expect(result.matches.map((m) => m.line)).toEqual([3, 4])
        expect(result.matches[0]!.text_truncated).toBe(true)
        expect(result.matches[0]!.text.startsWith("ab c ab c ")).toBe(true)
      })
    )
  )

  it.effect("a preview never splits a character: the emoji straddling the cut is left out", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const [m] = (yield* a.search("wd", "needle", "multi")).matches
        expect(m).toEqual({ path: "multi/m.txt", line: 1, text: "a".repeat(4095), text_truncated: true })
      })
    )
  )

  it.effect("matches stop at the response budget → truncated=true, encoded result within it", () =>
    withChannels({ ...vars, SERVERFS_MAX_RESPONSE_BYTES: "65536", SERVERFS_MAX_SEARCH_RESULTS: "100" }, (a) =>
      Effect.gen(function* () {
        const result = yield* a.search("wd", "needle", "many", { limit: 100 })
        expect(result.truncated).toBe(true)
        expect(result.returned).toBeGreaterThan(5)
        expect(result.returned).toBeLessThan(40)
        // The pipeline encodes the output twice (text + structuredContent).
        expect(2 * bytes(JSON.stringify(result))).toBeLessThanOrEqual(65536)
        // The matches kept are the first ones, in rg's order, each whole.
        for (const m of result.matches) expect(m.text_truncated).toBeUndefined()
      })
    )
  )

  it.effect("SERVERFS_SEARCH_MAX_LINE_BYTES sets the preview length", () =>
    withChannels({ ...vars, SERVERFS_SEARCH_MAX_LINE_BYTES: "100" }, (a) =>
      Effect.gen(function* () {
        const result = yield* a.search("wd", "needle", "many", { limit: 3 })
        for (const m of result.matches)
          expect(m).toMatchObject({ text: `needle ${"m".repeat(93)}`, text_truncated: true })
      })
    )
  )
})

describe("rg JSON record splitting", () => {
  const record = (path: string, text: string, line: number, submatches = 1) =>
    `${JSON.stringify({
      type: "match",
      data: {
        path: { text: path },
        lines: { text },
        line_number: line,
        absolute_offset: 0,
        submatches: Array.from({ length: submatches }, () => ({ match: { text: "q" }, start: 0, end: 1 }))
      }
    })}\n`

  const split = (stream: string, chunk: number, maxLineBytes: number, maxRecordBytes?: number) => {
    const events: Array<RawMatch | "summary" | undefined> = []
    const splitter = new RecordSplitter(maxLineBytes, (e) => events.push(e), maxRecordBytes)
    const buffer = Buffer.from(stream)
    for (let i = 0; i < buffer.length; i += chunk) splitter.push(buffer.subarray(i, i + chunk))
    splitter.end()
    return events
  }

  it("records are the same whatever the chunking, whole or oversized", () => {
    const stream = [
      record("./a.txt", 'q "quoted" \\ \u0001 é😀\n', 7),
      record("./b/c.txt", `${"q".repeat(500)}\n`, 123456, 300),
      record("./d.txt", `${"\u0002😀".repeat(100)}\n`, 42)
    ].join("")
    const expected = [
      { path: "a.txt", line: 7, text: 'q "quoted" \\ \u0001 é😀', truncated: false },
      { path: "b/c.txt", line: 123456, text: "q".repeat(64), truncated: true },
      { path: "d.txt", line: 42, text: `${"\u0002😀".repeat(12)}\u0002`, truncated: true }
    ]
    for (const chunk of [1, 2, 3, 7, 64, 1000, 1 << 20]) {
      // 300 submatches make the second record oversized at a 2 KiB record bound.
      expect(split(stream, chunk, 64, 2048), `chunk ${chunk}`).toEqual(expected)
      expect(split(stream, chunk, 64), `chunk ${chunk}`).toEqual(expected)
    }
  })

  it("an oversized record cut inside an escape or a surrogate pair still yields a clean preview", () => {
    const text = `${"\u0001".repeat(10)}${"😀".repeat(10)}\n`
    // Bounds that cut the JSON at every offset of the escapes.
    for (let bound = 60; bound < 200; bound++) {
      const [event] = split(record("./e.txt", text, 5, 50), 13, 4096, bound)
      if (event === undefined) continue // the cut fell before the line text began
      expect(event).toMatchObject({ path: "e.txt", line: 5 })
      const m = event as RawMatch
      // Complete once the bound takes in the whole line text; a strict prefix before that.
      if (m.truncated) expect(text.startsWith(m.text) && m.text.length <= text.length - 1).toBe(true)
      else expect(m.text).toBe(text.slice(0, -1))
      expect(m.text).not.toMatch(/[\uD800-\uDFFF]$/u)
    }
  })

  it("the summary record is recognised in either form", () => {
    const summary = '{"data":{"stats":{}},"type":"summary"}\n'
    expect(split(summary, 5, 64)).toEqual(["summary"])
  })
})
