/**
 * list_directory (tool-contracts §2.2): code-point order, offset/limit/has_more edges, the limit
 * cap echoed, `path` echoed as given, entry paths normalized, size for files only, second-
 * precision UTC timestamps, and names that are not valid UTF-8 dropped.
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
import { byCodePoint } from "./fixtures/codePoints.js"
import { buildTree, closeSockets, makeBase, removeBase, writeRawName } from "./fixtures/tree.js"

let base = ""
let root = ""
let vars: Vars = {}

/** Names whose code-point order differs from UTF-16 code-unit order (U+1F600 vs U+E000–U+FFFF). */
const UNICODE_NAMES = [
  "a",
  "B",
  "_",
  "é",
  "\uE000",
  "\uFB01",
  "\uFFFD",
  "\u{1F600}",
  "\u{10000}",
  "z",
  "Z",
  "0"
]

beforeAll(async () => {
  base = makeBase("serverfs-ws-list-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  await buildTree(root, {
    unicode: { dir: Object.fromEntries(UNICODE_NAMES.map((n) => [n, n])) },
    prefix: { dir: { ab: "", a: "", abc: "", "a\u{1F600}": "", "a\uFFFD": "" } },
    many: {
      dir: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, "0")}`, "x"]))
    },
    kinds: {
      dir: {
        "file.txt": "12345",
        "empty.txt": "",
        sub: { dir: {} },
        link: { symlink: "file.txt" },
        fifo: { fifo: true },
        sock: { socket: true }
      }
    },
    nested: { dir: { deeper: { dir: { "leaf.txt": "leaf" } } } },
    bytes: { dir: { "ok.txt": "ok" } }
  })
  writeRawName(path.join(root, "bytes"), Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74]), "bad")
  writeRawName(path.join(root, "bytes"), Buffer.from([0xc3, 0x28]), "bad")
  fs.utimesSync(
    path.join(root, "kinds", "file.txt"),
    new Date("2001-02-03T04:05:06.789Z"),
    new Date("2001-02-03T04:05:06.789Z")
  )
  vars = workdirVars(root)
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

describe("order", () => {
  it.effect("entries are sorted by code point (U+1F600 after U+E000–U+FFFF, unlike UTF-16 order)", () =>
    withChannels(vars, (a) =>
      Effect.map(a.list("wd", "unicode"), (r) => {
        const expected = byCodePoint(UNICODE_NAMES)
        expect(r.entries.map((e) => e.name)).toEqual(expected)
        // The fixture really distinguishes the two orders.
        expect([...UNICODE_NAMES].sort()).not.toEqual(expected)
        expect(expected.indexOf("\uFFFD")).toBeLessThan(expected.indexOf("\u{1F600}"))
      })
    )
  )
  it.effect("a prefix sorts before its extensions, whatever the following character", () =>
    withChannels(vars, (a) =>
      Effect.map(a.list("wd", "prefix"), (r) => {
        expect(r.entries.map((e) => e.name)).toEqual(["a", "ab", "abc", "a\uFFFD", "a\u{1F600}"])
      })
    )
  )
  it.effect("offset/limit slice the sorted order (pages concatenate to the full listing)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const full = (yield* a.list("wd", "unicode")).entries.map((e) => e.name)
        const pages: string[] = []
        for (let offset = 0; offset < full.length; offset += 5) {
          const page = yield* a.list("wd", "unicode", { offset, limit: 5 })
          pages.push(...page.entries.map((e) => e.name))
          expect(page.has_more).toBe(offset + 5 < full.length)
        }
        expect(pages).toEqual(full)
      })
    )
  )
})

describe("offset, limit, has_more", () => {
  it.effect("has_more = offset+limit < total; exact fit has has_more false", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const first = yield* a.list("wd", "many", { limit: 10 })
        expect([first.returned, first.has_more, first.offset, first.limit]).toEqual([10, true, 0, 10])
        expect(first.entries[0]!.name).toBe("f00")
        const exact = yield* a.list("wd", "many", { offset: 20, limit: 10 })
        expect([exact.returned, exact.has_more, exact.entries[9]!.name]).toEqual([10, false, "f29"])
        const all = yield* a.list("wd", "many", { limit: 30 })
        expect([all.returned, all.has_more]).toEqual([30, false])
        const short = yield* a.list("wd", "many", { offset: 25, limit: 10 })
        expect([short.returned, short.has_more]).toEqual([5, false])
      })
    )
  )
  it.effect("an offset at or past the end gives [] and has_more false", () =>
    withChannels(vars, (a) =>
      Effect.forEach([30, 31, 1000], (offset) =>
        Effect.map(a.list("wd", "many", { offset, limit: 5 }), (r) => {
          expect(r).toMatchObject({ entries: [], returned: 0, has_more: false, offset, limit: 5 })
        })
      )
    )
  )
  it.effect("an empty directory lists [] with has_more false", () =>
    withChannels(vars, (a) =>
      Effect.map(a.list("wd", "kinds/sub"), (r) => {
        expect(r).toMatchObject({ entries: [], returned: 0, has_more: false })
      })
    )
  )
  it.effect("limit is capped by SERVERFS_MAX_LIST_ENTRIES and the effective limit is echoed", () =>
    withChannels(workdirVars(root, { SERVERFS_MAX_LIST_ENTRIES: "7" }), (a) =>
      Effect.gen(function* () {
        const r = yield* a.list("wd", "many", { limit: 100 })
        expect([r.limit, r.returned, r.has_more]).toEqual([7, 7, true])
        const smaller = yield* a.list("wd", "many", { limit: 3 })
        expect([smaller.limit, smaller.returned]).toEqual([3, 3])
        const tail = yield* a.list("wd", "many", { offset: 28, limit: 100 })
        expect([tail.limit, tail.returned, tail.has_more]).toEqual([7, 2, false])
      })
    )
  )
})

describe("paths, kinds, sizes, timestamps", () => {
  it.effect("`path` is echoed as given; entry paths are normalized relative paths", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        for (const given of [
          "nested/deeper",
          "./nested/deeper/",
          "nested//deeper",
          "kinds/../nested/./deeper"
        ]) {
          const r = yield* a.list("wd", given)
          expect(r.workdir).toBe("wd")
          expect(r.path).toBe(given)
          expect(r.entries.map((e) => [e.name, e.path])).toEqual([["leaf.txt", "nested/deeper/leaf.txt"]])
        }
        for (const given of ["", ".", "./", "nested/.."]) {
          const r = yield* a.list("wd", given)
          expect(r.path).toBe(given)
          expect(r.entries.find((e) => e.name === "nested")!.path).toBe("nested")
        }
      })
    )
  )
  it.effect(
    "type file|directory|symlink|other; size only for files; modified_at is YYYY-MM-DDTHH:MM:SSZ",
    () =>
      withChannels(vars, (a) =>
        Effect.map(a.list("wd", "kinds"), (r) => {
          expect(r.entries.map((e) => [e.name, e.type, e.size])).toEqual([
            ["empty.txt", "file", 0],
            ["fifo", "other", null],
            ["file.txt", "file", 5],
            ["link", "symlink", null],
            ["sock", "other", null],
            ["sub", "directory", null]
          ])
          for (const e of r.entries) expect(e.modified_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
          expect(r.entries.find((e) => e.name === "file.txt")!.modified_at).toBe("2001-02-03T04:05:06Z")
        })
      )
  )
  it.effect("names that are not valid UTF-8 are dropped", () =>
    withChannels(vars, (a) =>
      Effect.map(a.list("wd", "bytes"), (r) => {
        expect(fs.readdirSync(path.join(root, "bytes")).length).toBe(3)
        expect(r.entries.map((e) => e.name)).toEqual(["ok.txt"])
        expect([r.returned, r.has_more]).toEqual([1, false])
      })
    )
  )
  it.effect("a file → NOT_A_DIRECTORY; a final symlink → SYMLINK_NOT_ALLOWED", () =>
    withChannels(vars, (a) =>
      Effect.all([
        expectCode(a.list("wd", "kinds/file.txt"), "NOT_A_DIRECTORY"),
        expectCode(a.list("wd", "kinds/link"), "SYMLINK_NOT_ALLOWED"),
        expectCode(a.list("wd", "kinds/nope"), "PATH_NOT_FOUND")
      ])
    )
  )
})

describe("hygiene", () => {
  it("no error text of this suite contains a host path, an inode number or a temp name", () => {
    expect(expectHygienic(recordedErrors(), defaultForbidden())).toBeGreaterThan(2)
  })
})
