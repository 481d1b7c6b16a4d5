/**
 * read_text_file and the resource template (tool-contracts §2.5, §3): pages, EOF edges, bytes
 * kept exactly (CRLF, no final newline), the BOM rule, the binary probe, strict UTF-8 in the
 * window only, LINE_TOO_LARGE, the byte budget, the line caps, revisions and all-or-nothing
 * resources.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  defaultForbidden,
  expectCode,
  expectHygienic,
  recordedErrors,
  type Vars,
  withChannels,
  workdirVars
} from "./fixtures/channels.js"
import { makeBase, removeBase } from "./fixtures/tree.js"

const BOM = "\uFEFF"
const SMALL = 64

let base = ""
let root = ""
let vars: Vars = {}
/** Same directory, second workdir `small` with WORKDIR_02_MAX_READ_BYTES=64. */
let smallVars: Vars = {}

const lines = (n: number, make: (i: number) => string = (i) => `line${i}`): string =>
  Array.from({ length: n }, (_, i) => `${make(i + 1)}\n`).join("")

const files: Record<string, string | Buffer> = {
  "ten.txt": lines(10),
  "empty.txt": "",
  "nofinal.txt": "a\nb\nc",
  "crlf.txt": "one\r\ntwo\r\nthree\r\n",
  "crlf-nofinal.txt": "one\r\ntwo\r",
  "unicode.txt": "héllo ✓ 😀\n\u{10FFFF}\n",
  "bom.txt": `${BOM}first\nsecond\n`,
  "bom-mid.txt": `first\n${BOM}second\n`,
  "bom-only.txt": BOM,
  "bom-bom.txt": `${BOM}${BOM}x\n`,
  "nul-early.txt": `a\0b\n${lines(100)}`,
  "nul-1023.txt": Buffer.concat([Buffer.from(lines(102, () => "abcdefghi")), Buffer.from("abc\0\n")]),
  "nul-1024.txt": Buffer.concat([Buffer.from(lines(102, () => "abcdefghi")), Buffer.from("abcd\0\n")]),
  "bad-utf8.txt": Buffer.concat([
    Buffer.from("ok1\n"),
    Buffer.from([0xff, 0xfe, 0x0a]),
    Buffer.from("ok3\nok4\n")
  ]),
  "bad-utf8-last.txt": Buffer.concat([Buffer.from("ok1\n"), Buffer.from([0x61, 0xc3])]),
  "overlong.txt": Buffer.concat([Buffer.from("ok1\n"), Buffer.from([0xc0, 0xaf, 0x0a])]),
  "surrogate.txt": Buffer.concat([Buffer.from("ok1\n"), Buffer.from([0xed, 0xa0, 0x80, 0x0a])]),
  // For the `small` workdir (64 bytes per page and per line).
  "long-line.txt": `short\n${"x".repeat(100)}\nend\n`,
  "long-last.txt": `short\n${"x".repeat(100)}`,
  "long-after-page.txt": `one\ntwo\n${"y".repeat(SMALL)}\n`,
  "exact-line.txt": `${"z".repeat(SMALL - 1)}\nok\n${"z".repeat(SMALL)}\n`,
  "twenties.txt": lines(10, () => "x".repeat(19)),
  "budget-exact.txt": `${"a".repeat(31)}\n${"b".repeat(31)}\nc\n`,
  "bom-budget.txt": `${BOM}${"q".repeat(SMALL - 1)}\n`,
  "long-skipped.txt": `${"s".repeat(500)}\nafter\n`
}

beforeAll(() => {
  base = makeBase("serverfs-ws-read-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name), content)
  fs.mkdirSync(path.join(root, "dir"))
  fs.writeFileSync(
    path.join(root, "big.txt"),
    lines(20_000, (i) => `row ${i} ${"é".repeat(i % 7)}\r`)
  )
  vars = workdirVars(root)
  smallVars = {
    ...vars,
    WORKDIR_02_ALIAS: "small",
    WORKDIR_02_PATH: root,
    WORKDIR_02_MAX_READ_BYTES: String(SMALL)
  }
})

afterAll(() => removeBase(base))

describe("pages", () => {
  it.effect("the first page: start_line, end_line, has_more, next_start_line", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "ten.txt", { maxLines: 3 }), (r) => {
        expect(r).toEqual({
          workdir: "wd",
          path: "ten.txt",
          start_line: 1,
          end_line: 3,
          content: "line1\nline2\nline3\n",
          bytes_returned: 18,
          has_more: true,
          next_start_line: 4,
          revision: r.revision
        })
      })
    )
  )
  it.effect("a middle page and the last page (has_more false, next_start_line null)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const mid = yield* a.read("wd", "ten.txt", { startLine: 4, maxLines: 3 })
        expect([mid.start_line, mid.end_line, mid.content, mid.has_more, mid.next_start_line]).toEqual([
          4,
          6,
          "line4\nline5\nline6\n",
          true,
          7
        ])
        const last = yield* a.read("wd", "ten.txt", { startLine: 9, maxLines: 3 })
        expect([last.end_line, last.content, last.has_more, last.next_start_line]).toEqual([
          10,
          "line9\nline10\n",
          false,
          null
        ])
      })
    )
  )
  it.effect("a page ending exactly at EOF has has_more false", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "ten.txt", { startLine: 8, maxLines: 3 }), (r) => {
        expect([r.end_line, r.has_more, r.next_start_line]).toEqual([10, false, null])
      })
    )
  )
  it.effect("an empty file: content '', end_line 0, has_more false, next_start_line null", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "empty.txt"), (r) => {
        expect(r).toMatchObject({
          start_line: 1,
          end_line: 0,
          content: "",
          bytes_returned: 0,
          has_more: false,
          next_start_line: null
        })
      })
    )
  )
  it.effect("start beyond EOF: content '', end_line = start_line − 1, has_more false, next null", () =>
    withChannels(vars, (a) =>
      Effect.forEach(
        [
          ["ten.txt", 11],
          ["ten.txt", 500],
          ["nofinal.txt", 4],
          ["empty.txt", 7]
        ] as const,
        ([p, start]) =>
          Effect.map(a.read("wd", p, { startLine: start }), (r) => {
            expect(r).toMatchObject({
              start_line: start,
              end_line: start - 1,
              content: "",
              has_more: false,
              next_start_line: null
            })
          })
      )
    )
  )
  it.effect("a file without a final newline: the last line is returned as is", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const all = yield* a.read("wd", "nofinal.txt")
        expect([all.content, all.end_line, all.has_more]).toEqual(["a\nb\nc", 3, false])
        const page = yield* a.read("wd", "nofinal.txt", { startLine: 2, maxLines: 1 })
        expect([page.content, page.end_line, page.has_more, page.next_start_line]).toEqual([
          "b\n",
          2,
          true,
          3
        ])
        const tail = yield* a.read("wd", "nofinal.txt", { startLine: 3, maxLines: 1 })
        expect([tail.content, tail.has_more, tail.next_start_line]).toEqual(["c", false, null])
      })
    )
  )
  it.effect("CRLF and a final lone \\r are kept byte for byte", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.read("wd", "crlf.txt")
        expect(r.content).toBe("one\r\ntwo\r\nthree\r\n")
        expect(r.bytes_returned).toBe(17)
        expect((yield* a.read("wd", "crlf-nofinal.txt")).content).toBe("one\r\ntwo\r")
      })
    )
  )
  it.effect("bytes_returned counts UTF-8 bytes, not characters", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "unicode.txt"), (r) => {
        expect(r.content).toBe("héllo ✓ 😀\n\u{10FFFF}\n")
        expect(r.bytes_returned).toBe(Buffer.byteLength(r.content))
      })
    )
  )
  it.effect("following next_start_line through a 20000-line file reproduces it exactly", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const expected = fs.readFileSync(path.join(root, "big.txt"), "utf8")
        const sizes = [1, 7, 200, 333, 500, 499]
        let start = 1
        let text = ""
        let pages = 0
        let revision: string | undefined
        for (;;) {
          const r = yield* a.read("wd", "big.txt", {
            startLine: start,
            maxLines: sizes[pages % sizes.length]!
          })
          text += r.content
          pages++
          revision ??= r.revision
          expect(r.revision).toBe(revision)
          expect(r.end_line - r.start_line + 1).toBe(r.content.split("\n").length - 1)
          if (!r.has_more) break
          expect(r.next_start_line).toBe(r.end_line + 1)
          start = r.next_start_line!
        }
        expect(text).toBe(expected)
        expect(pages).toBeGreaterThan(40)
      })
    )
  )
})

describe("BOM", () => {
  it.effect("a UTF-8 BOM is removed from the physical first line; bytes_returned counts after removal", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "bom.txt"), (r) => {
        expect(r.content).toBe("first\nsecond\n")
        expect(r.bytes_returned).toBe(13)
      })
    )
  )
  it.effect("only the first BOM of the file is removed (a second one is data)", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "bom-bom.txt"), (r) => {
        expect(r.content).toBe(`${BOM}x\n`)
        expect(r.bytes_returned).toBe(5)
      })
    )
  )
  it.effect("a BOM at the start of line 2 is kept, whether reading from line 1 or line 2", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        expect((yield* a.read("wd", "bom-mid.txt")).content).toBe(`first\n${BOM}second\n`)
        const from2 = yield* a.read("wd", "bom-mid.txt", { startLine: 2 })
        expect(from2.content).toBe(`${BOM}second\n`)
        expect(from2.bytes_returned).toBe(10)
      })
    )
  )
  it.effect("reading a BOM file from line 2 returns line 2 unchanged", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "bom.txt", { startLine: 2 }), (r) => {
        expect([r.content, r.bytes_returned, r.start_line, r.end_line]).toEqual(["second\n", 7, 2, 2])
      })
    )
  )
  it.effect("a file holding only a BOM reads as empty", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "bom-only.txt"), (r) => {
        expect([r.content, r.bytes_returned, r.end_line, r.has_more]).toEqual(["", 0, 0, false])
      })
    )
  )
  it.effect("the BOM does not count against the byte budget of line 1", () =>
    withChannels(smallVars, (a) =>
      Effect.map(a.read("small", "bom-budget.txt"), (r) => {
        expect(r.bytes_returned).toBe(SMALL)
        expect(r.has_more).toBe(false)
      })
    )
  )
})

describe("binary and encoding", () => {
  it.effect("a NUL in the first 1024 bytes → BINARY_FILE, whatever start_line", () =>
    withChannels(vars, (a) =>
      Effect.forEach([1, 2, 50, 101, 10_000], (start) =>
        expectCode(
          a.read("wd", "nul-early.txt", { startLine: start }),
          "BINARY_FILE",
          "BINARY_FILE: wd:nul-early.txt — file contains NUL bytes and is treated as binary"
        )
      )
    )
  )
  it.effect("a NUL at byte 1023 (the 1024th byte) is binary; one at byte 1024 is not", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        expect(Buffer.from(files["nul-1023.txt"]!).indexOf(0)).toBe(1023)
        expect(Buffer.from(files["nul-1024.txt"]!).indexOf(0)).toBe(1024)
        yield* expectCode(a.read("wd", "nul-1023.txt", { startLine: 103 }), "BINARY_FILE")
        const r = yield* a.read("wd", "nul-1024.txt", { startLine: 103 })
        expect(r.content).toBe("abcd\0\n")
      })
    )
  )
  it.effect("invalid UTF-8 in the window → UNSUPPORTED_TEXT_ENCODING", () =>
    withChannels(vars, (a) =>
      Effect.forEach(["bad-utf8.txt", "bad-utf8-last.txt", "overlong.txt", "surrogate.txt"], (p) =>
        expectCode(
          a.read("wd", p, { startLine: 2 }),
          "UNSUPPORTED_TEXT_ENCODING",
          `UNSUPPORTED_TEXT_ENCODING: wd:${p} — content is not valid UTF-8`
        )
      )
    )
  )
  it.effect("invalid bytes in skipped lines (or in the line after a full page) are not detected", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const after = yield* a.read("wd", "bad-utf8.txt", { startLine: 3 })
        expect(after.content).toBe("ok3\nok4\n")
        const before = yield* a.read("wd", "bad-utf8.txt", { maxLines: 1 })
        expect([before.content, before.has_more, before.next_start_line]).toEqual(["ok1\n", true, 2])
      })
    )
  )
})

describe("LINE_TOO_LARGE and the byte budget (WORKDIR_02_MAX_READ_BYTES=64)", () => {
  it.effect("a line in the window longer than max_read_bytes → LINE_TOO_LARGE naming the line", () =>
    withChannels(smallVars, (a) =>
      Effect.all([
        expectCode(
          a.read("small", "long-line.txt"),
          "LINE_TOO_LARGE",
          "LINE_TOO_LARGE: small:long-line.txt — line 2 exceeds 64 bytes"
        ),
        expectCode(a.read("small", "long-line.txt", { startLine: 2 }), "LINE_TOO_LARGE"),
        expectCode(
          a.read("small", "long-last.txt"),
          "LINE_TOO_LARGE",
          "LINE_TOO_LARGE: small:long-last.txt — line 2 exceeds 64 bytes"
        )
      ])
    )
  )
  it.effect("the one line just after a full page is checked too", () =>
    withChannels(smallVars, (a) =>
      Effect.all([
        expectCode(
          a.read("small", "long-line.txt", { maxLines: 1 }),
          "LINE_TOO_LARGE",
          "LINE_TOO_LARGE: small:long-line.txt — line 2 exceeds 64 bytes"
        ),
        expectCode(
          a.read("small", "long-after-page.txt", { maxLines: 2 }),
          "LINE_TOO_LARGE",
          "LINE_TOO_LARGE: small:long-after-page.txt — line 3 exceeds 64 bytes"
        )
      ])
    )
  )
  it.effect("a line two after a full page is not read; skipped long lines are not checked", () =>
    withChannels(smallVars, (a) =>
      Effect.gen(function* () {
        const first = yield* a.read("small", "long-after-page.txt", { maxLines: 1 })
        expect([first.content, first.has_more, first.next_start_line]).toEqual(["one\n", true, 2])
        const skipped = yield* a.read("small", "long-line.txt", { startLine: 3 })
        expect(skipped.content).toBe("end\n")
        expect((yield* a.read("small", "long-skipped.txt", { startLine: 2 })).content).toBe("after\n")
      })
    )
  )
  it.effect("a line of exactly max_read_bytes (with its \\n) is accepted; one byte more is not", () =>
    withChannels(smallVars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.read("small", "exact-line.txt", { maxLines: 1 })
        expect([r.bytes_returned, r.has_more, r.next_start_line]).toEqual([SMALL, true, 2])
        yield* expectCode(
          a.read("small", "exact-line.txt", { startLine: 3 }),
          "LINE_TOO_LARGE",
          "LINE_TOO_LARGE: small:exact-line.txt — line 3 exceeds 64 bytes"
        )
      })
    )
  )
  it.effect("the page stops (has_more) before a line that would push it past max_read_bytes", () =>
    withChannels(smallVars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.read("small", "twenties.txt")
        expect([r.end_line, r.bytes_returned, r.has_more, r.next_start_line]).toEqual([3, 60, true, 4])
        const next = yield* a.read("small", "twenties.txt", { startLine: 4 })
        expect([next.end_line, next.bytes_returned]).toEqual([6, 60])
      })
    )
  )
  it.effect("a page of exactly max_read_bytes is complete", () =>
    withChannels(smallVars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.read("small", "budget-exact.txt")
        expect([r.end_line, r.bytes_returned, r.has_more, r.next_start_line]).toEqual([2, 64, true, 3])
        const same = yield* a.read("wd", "budget-exact.txt")
        expect([same.end_line, same.has_more]).toEqual([3, false])
      })
    )
  )
})

describe("the effective max_lines", () => {
  it.effect("max_lines is capped by SERVERFS_MAX_READ_LINES", () =>
    withChannels(workdirVars(root, { SERVERFS_MAX_READ_LINES: "4" }), (a) =>
      Effect.gen(function* () {
        const r = yield* a.read("wd", "ten.txt", { maxLines: 100 })
        expect([r.end_line, r.has_more, r.next_start_line]).toEqual([4, true, 5])
        const fewer = yield* a.read("wd", "ten.txt", { maxLines: 2 })
        expect(fewer.end_line).toBe(2)
      })
    )
  )
  it.effect("WORKDIR_01_MAX_READ_LINES overrides the global cap (both ways)", () =>
    Effect.all([
      withChannels(workdirVars(root, { SERVERFS_MAX_READ_LINES: "4", WORKDIR_01_MAX_READ_LINES: "2" }), (a) =>
        Effect.map(a.read("wd", "ten.txt", { maxLines: 100 }), (r) => expect(r.end_line).toBe(2))
      ),
      withChannels(workdirVars(root, { SERVERFS_MAX_READ_LINES: "2", WORKDIR_01_MAX_READ_LINES: "6" }), (a) =>
        Effect.map(a.read("wd", "ten.txt", { maxLines: 100 }), (r) => expect(r.end_line).toBe(6))
      )
    ])
  )
  it.effect("the default cap is 500 lines", () =>
    withChannels(vars, (a) =>
      Effect.map(a.read("wd", "big.txt", { maxLines: 10_000 }), (r) => {
        expect([r.end_line, r.has_more]).toEqual([500, true])
      })
    )
  )
})

describe("revision", () => {
  it.effect("every page of an unchanged file carries the same revision, equal to stat_file's", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const p1 = yield* a.read("wd", "ten.txt", { maxLines: 3 })
        const p2 = yield* a.read("wd", "ten.txt", { startLine: 4, maxLines: 3 })
        const beyond = yield* a.read("wd", "ten.txt", { startLine: 99 })
        const st = yield* a.stat("wd", "ten.txt")
        expect(p1.revision).toMatch(/^v1:[0-9a-f]{16}$/)
        expect(new Set([p1.revision, p2.revision, beyond.revision, st.revision]).size).toBe(1)
      })
    )
  )
  it.effect("a file modified between two page reads shows a different revision on the second page", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = path.join(root, "changing.txt")
        fs.writeFileSync(file, lines(6))
        const p1 = yield* a.read("wd", "changing.txt", { maxLines: 3 })
        fs.appendFileSync(file, "line7\n")
        const p2 = yield* a.read("wd", "changing.txt", { startLine: 4, maxLines: 3 })
        expect(p2.revision).not.toBe(p1.revision)
        expect(p2.revision).toBe((yield* a.stat("wd", "changing.txt")).revision)
      })
    )
  )
})

describe("the resource template (all or nothing)", () => {
  it.effect("returns the whole text (BOM removed) and the normalized path", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        expect(yield* a.resource("wd", "bom.txt")).toEqual({ text: "first\nsecond\n", relative: "bom.txt" })
        expect(yield* a.resource("wd", "./dir/../crlf.txt")).toEqual({
          text: "one\r\ntwo\r\nthree\r\n",
          relative: "crlf.txt"
        })
        expect((yield* a.resource("wd", "empty.txt")).text).toBe("")
      })
    )
  )
  it.effect(
    "more lines than the workdir's max_read_lines → RESOURCE_TOO_LARGE; exactly that many is fine",
    () =>
      Effect.all([
        withChannels(workdirVars(root, { WORKDIR_01_MAX_READ_LINES: "9" }), (a) =>
          expectCode(
            a.resource("wd", "ten.txt"),
            "RESOURCE_TOO_LARGE",
            "RESOURCE_TOO_LARGE: wd:ten.txt exceeds the resource read budget; use read_text_file for paginated access"
          )
        ),
        withChannels(workdirVars(root, { SERVERFS_MAX_READ_LINES: "10" }), (a) =>
          Effect.map(a.resource("wd", "ten.txt"), (r) => expect(r.text).toBe(lines(10)))
        )
      ])
  )
  it.effect("more bytes than max_read_bytes → RESOURCE_TOO_LARGE (each line fits)", () =>
    withChannels(smallVars, (a) =>
      Effect.all([
        expectCode(a.resource("small", "twenties.txt"), "RESOURCE_TOO_LARGE"),
        Effect.map(a.resource("small", "bom-budget.txt"), (r) => expect(r.text).toBe(`${"q".repeat(63)}\n`))
      ])
    )
  )
  it.effect(
    "a too-long line is LINE_TOO_LARGE, a NUL is BINARY_FILE, bad UTF-8 is UNSUPPORTED_TEXT_ENCODING",
    () =>
      withChannels(smallVars, (a) =>
        Effect.all([
          expectCode(a.resource("small", "long-line.txt"), "LINE_TOO_LARGE"),
          expectCode(a.resource("wd", "nul-early.txt"), "BINARY_FILE"),
          expectCode(a.resource("wd", "bad-utf8.txt"), "UNSUPPORTED_TEXT_ENCODING")
        ])
      )
  )
  it.effect("the resource of a directory (or the root) → NOT_A_FILE", () =>
    withChannels(vars, (a) =>
      Effect.all([
        expectCode(a.resource("wd", "dir"), "NOT_A_FILE", "NOT_A_FILE: wd:dir — is a directory"),
        expectCode(a.resource("wd", ""), "NOT_A_FILE")
      ])
    )
  )
})

describe("hygiene", () => {
  it("no error text of this suite contains a host path, an inode number or a temp name", () => {
    expect(expectHygienic(recordedErrors(), defaultForbidden())).toBeGreaterThan(20)
  })
})
