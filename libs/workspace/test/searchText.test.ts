/**
 * search_text (tool-contracts §2.4): literal search, case folding, glob semantics relative to
 * the search root, workdir-relative result paths, line text rules, what never matches (NUL
 * files, invalid UTF-8, oversized files, symlinks, VCS dirs, reserved temp files, non-UTF-8
 * names), the exact truncation rule, root errors, SEARCH_TIMEOUT and SEARCH_FAILED, and the
 * deliberate ignore-file choices (only ignore files inside the workdir count).
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
import { buildTree, makeBase, removeBase, writeRawName } from "./fixtures/tree.js"

let base = ""
let root = ""
let vars: Vars = {}
let hiddenVars: Vars = {}

const utf16 = (text: string): Buffer =>
  Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")])

beforeAll(async () => {
  base = makeBase("serverfs-ws-search-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  // Ignore files (here above the workdir, and inside it under ignores/) have no effect at all.
  fs.writeFileSync(path.join(base, ".gitignore"), "*.md\ntop.txt\n")
  fs.writeFileSync(path.join(base, ".ignore"), "*.txt\n")
  fs.writeFileSync(path.join(base, ".rgignore"), "*\n")
  await buildTree(base, { outside: { dir: { "o.txt": "LINKHIT outside\n" } } })
  await buildTree(root, {
    "top.txt": "TOPHIT\n",
    glob: {
      dir: {
        "top.md": "GLOBHIT\n",
        "y.md": "GLOBHIT\n",
        "x.txt": "GLOBHIT\n",
        docs: {
          dir: {
            "a.md": "GLOBHIT\n",
            "y.md": "GLOBHIT\n",
            "b.txt": "GLOBHIT\n",
            sub: { dir: { "c.md": "GLOBHIT\n", "y.md": "GLOBHIT\n" } }
          }
        },
        other: { dir: { docs: { dir: { "d.md": "GLOBHIT\n" } } } }
      }
    },
    literal: { dir: { "meta.txt": "a.b*c [x] (y) ^$ \\d+ {2} a|b\nplain abc\n" } },
    flags: { dir: { "f.txt": "--files\n-e\n--pre=sh\n-uuu --hidden\n" } },
    cased: { dir: { "case.txt": "Needle mixed\nNEEDLE upper\nneedle lower\nnothing\n" } },
    lines: {
      dir: {
        "crlf.txt": "LINEHIT one\r\nLINEHIT two\r",
        "nofinal.txt": "first\nLINEHIT last",
        "numbers.txt": "a\nb\nLINEHIT third\nc\nLINEHIT fifth\n",
        "bom.txt": "\uFEFFLINEHIT bom\n"
      }
    },
    bytes: {
      dir: {
        "nul.txt": "BYTEHIT before\0 nul\nBYTEHIT after\n",
        "bad.txt": Buffer.concat([
          Buffer.from("BYTEHIT good\n"),
          Buffer.from([0xff]),
          Buffer.from(" BYTEHIT bad\n")
        ]),
        "utf16.txt": utf16("BYTEHIT one\nBYTEHIT two\nBYTEHIT three\n"),
        "ok.txt": "BYTEHIT ok\n"
      }
    },
    sizes: { dir: { "exact.txt": `SIZEHIT${"x".repeat(92)}\n`, "big.txt": `SIZEHIT${"x".repeat(93)}\n` } },
    links: {
      dir: {
        "real.txt": "LINKHIT real\n",
        "file-link.txt": { symlink: "real.txt" },
        "dir-link": { symlink: "../lines" },
        "out-link": { symlink: path.join(base, "outside") },
        "abs-file-link.txt": { symlink: path.join(base, "outside", "o.txt") }
      }
    },
    vcs: {
      dir: {
        ".git": { dir: { HEAD: "VCSHIT git\n", objects: { dir: { x: "VCSHIT obj\n" } } } },
        ".hg": { dir: { store: "VCSHIT hg\n" } },
        ".svn": { dir: { entries: "VCSHIT svn\n" } },
        nested: { dir: { ".git": { dir: { config: "VCSHIT nested\n" } }, "kept.txt": "VCSHIT kept\n" } },
        ".hidden.txt": "VCSHIT hidden\n",
        "plain.txt": "VCSHIT plain\n"
      }
    },
    reserved: {
      dir: {
        ".serverfs-tmp-abc": "RESHIT temp\n",
        ".serverfs-tmp-dir": { dir: { "inner.txt": "RESHIT inner\n" } },
        deeper: {
          dir: { ".serverfs-tmp-x.txt": "RESHIT deeper\n", ".serverfs-disabled": "RESHIT sentinel\n" }
        },
        "ok.txt": "RESHIT ok\n"
      }
    },
    names: { dir: { "ok.txt": "NAMEHIT ok\n" } },
    ignores: {
      dir: {
        ".gitignore": "ignored-by-git.txt\n",
        ".ignore": "ignored-by-ignore.txt\n",
        "ignored-by-git.txt": "IGNHIT git\n",
        "ignored-by-ignore.txt": "IGNHIT ignore\n",
        "kept.txt": "IGNHIT kept\n"
      }
    },
    count: {
      dir: { "three.txt": "CNT 1\nCNT 2\nCNT 3\n", "none.txt": "nothing\n" }
    },
    many: {
      dir: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`m${i}.txt`, "MANY a\nMANY b\n"]))
    },
    a: { dir: { a: { dir: { "a.txt": "REPHIT\n" } } } },
    internal: { dir: { "secret.txt": "DENYHIT\n" } },
    "x.secret": "DENYHIT\n",
    "keys.pem": "DENYHIT\n",
    // Denied by a path glob, which ripgrep cannot be told about (only name globs are passed to it
    // as excludes), so rg reads it and every match is refused by the per-result policy check.
    flood: { dir: { "flood.txt": "FLOOD\n".repeat(200_000), "ok.txt": "FLOOD ok\n" } },
    "file.txt": "FILEHIT\n"
  })
  writeRawName(path.join(root, "names"), Buffer.from([0x6e, 0xff, 0x2e, 0x74, 0x78, 0x74]), "NAMEHIT bad\n")
  vars = workdirVars(root, { SERVERFS_EXTRA_DENY_GLOBS: "internal/**,*.secret,*.deny,flood/flood.txt" })
  hiddenVars = { ...vars, WORKDIR_01_ALLOW_HIDDEN: "true" }
})

afterAll(() => removeBase(base))

type Hit = { readonly path: string; readonly line: number; readonly text: string }
const sorted = (hits: ReadonlyArray<Hit>): Hit[] =>
  [...hits].sort((x, y) => (x.path === y.path ? x.line - y.line : x.path < y.path ? -1 : 1))
const pathsOf = (hits: ReadonlyArray<Hit>): string[] => [...new Set(hits.map((h) => h.path))].sort()

describe("literal matching", () => {
  it.effect("regex metacharacters are literal", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        for (const q of ["a.b*c", "[x]", "(y)", "^$", "\\d+", "{2}", "a|b"]) {
          const r = yield* a.search("wd", q, "literal")
          expect(r.matches, q).toEqual([
            { path: "literal/meta.txt", line: 1, text: "a.b*c [x] (y) ^$ \\d+ {2} a|b" }
          ])
        }
        expect((yield* a.search("wd", ".*", "literal")).matches).toEqual([])
        expect((yield* a.search("wd", "a.c", "literal")).matches).toEqual([])
      })
    )
  )
  it.effect("a query or glob that looks like an rg flag is data, never an option", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        for (const [q, line] of [
          ["--files", 1],
          ["-e", 2],
          ["--pre=sh", 3],
          ["-uuu --hidden", 4]
        ] as const) {
          const r = yield* a.search("wd", q, "flags")
          expect(r.matches, q).toEqual([{ path: "flags/f.txt", line, text: q }])
        }
        // A glob value is passed as the argument of --glob, so "--hidden" is just a glob.
        expect((yield* a.search("wd", "VCSHIT", "vcs", { glob: "--hidden" })).matches).toEqual([])
        expect((yield* a.search("wd", "-e", "flags", { glob: "-*" })).matches).toEqual([])
      })
    )
  )
  it.effect("case_sensitive=true by default; false folds case", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const exact = yield* a.search("wd", "needle", "cased")
        expect(exact.matches.map((m) => m.line)).toEqual([3])
        const folded = yield* a.search("wd", "needle", "cased", { caseSensitive: false })
        expect(sorted(folded.matches).map((m) => m.text)).toEqual([
          "Needle mixed",
          "NEEDLE upper",
          "needle lower"
        ])
      })
    )
  )
})

describe("line text and numbers", () => {
  it.effect("line is 1-based; text drops the final \\n but keeps \\r; no final newline still matches", () =>
    withChannels(vars, (a) =>
      Effect.map(a.search("wd", "LINEHIT", "lines"), (r) => {
        expect(sorted(r.matches)).toEqual([
          { path: "lines/bom.txt", line: 1, text: "LINEHIT bom" },
          { path: "lines/crlf.txt", line: 1, text: "LINEHIT one\r" },
          { path: "lines/crlf.txt", line: 2, text: "LINEHIT two\r" },
          { path: "lines/nofinal.txt", line: 2, text: "LINEHIT last" },
          { path: "lines/numbers.txt", line: 3, text: "LINEHIT third" },
          { path: "lines/numbers.txt", line: 5, text: "LINEHIT fifth" }
        ])
        expect([r.returned, r.truncated]).toEqual([6, false])
      })
    )
  )
  it.effect("a NUL file contributes nothing; invalid-UTF-8 lines never match; UTF-16 files never match", () =>
    withChannels(vars, (a) =>
      Effect.map(a.search("wd", "BYTEHIT", "bytes"), (r) => {
        expect(sorted(r.matches)).toEqual([
          { path: "bytes/bad.txt", line: 1, text: "BYTEHIT good" },
          { path: "bytes/ok.txt", line: 1, text: "BYTEHIT ok" }
        ])
        expect(r.truncated).toBe(false)
      })
    )
  )
})

describe("paths and globs (relative to the search root)", () => {
  it.effect("result paths are workdir-relative with the search-root prefix; a/a/a.txt is not collapsed", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        for (const p of ["", "a", "a/a", "./a/./a/", "a/a/.."]) {
          const r = yield* a.search("wd", "REPHIT", p)
          expect(r.matches, p).toEqual([{ path: "a/a/a.txt", line: 1, text: "REPHIT" }])
        }
      })
    )
  )
  const globCases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    [
      "glob",
      "*.md",
      ["top.md", "y.md", "docs/a.md", "docs/y.md", "docs/sub/c.md", "docs/sub/y.md", "other/docs/d.md"]
    ],
    ["glob", "docs/*.md", ["docs/a.md", "docs/y.md"]],
    ["glob", "**/y.md", ["y.md", "docs/y.md", "docs/sub/y.md"]],
    ["glob", "docs/**", ["docs/a.md", "docs/y.md", "docs/b.txt", "docs/sub/c.md", "docs/sub/y.md"]],
    ["glob", "**/docs/*.md", ["docs/a.md", "docs/y.md", "other/docs/d.md"]],
    ["glob", "!*.md", ["x.txt", "docs/b.txt"]],
    ["glob/docs", "docs/*.md", []],
    ["glob/docs", "*.md", ["a.md", "y.md", "sub/c.md", "sub/y.md"]],
    ["glob/docs", "sub/*.md", ["sub/c.md", "sub/y.md"]],
    ["glob/docs", "y.md", ["y.md", "sub/y.md"]]
  ]
  for (const [root_, glob, expected] of globCases) {
    it.effect(`path=${JSON.stringify(root_)} glob=${JSON.stringify(glob)} → ${expected.length} files`, () =>
      withChannels(vars, (a) =>
        Effect.map(a.search("wd", "GLOBHIT", root_, { glob }), (r) => {
          expect(pathsOf(r.matches)).toEqual(expected.map((p) => `${root_}/${p}`).sort())
        })
      )
    )
  }
  it.effect("names that are not valid UTF-8 are dropped", () =>
    withChannels(vars, (a) =>
      Effect.map(a.search("wd", "NAMEHIT", "names"), (r) => {
        expect(fs.readdirSync(path.join(root, "names")).length).toBe(2)
        expect(r.matches).toEqual([{ path: "names/ok.txt", line: 1, text: "NAMEHIT ok" }])
      })
    )
  )
})

describe("what is never searched", () => {
  it.effect(
    "files larger than SERVERFS_SEARCH_MAX_FILE_BYTES are skipped (exactly the limit is searched)",
    () =>
      withChannels({ ...vars, SERVERFS_SEARCH_MAX_FILE_BYTES: "100" }, (a) =>
        Effect.map(a.search("wd", "SIZEHIT", "sizes"), (r) => {
          expect(fs.statSync(path.join(root, "sizes", "exact.txt")).size).toBe(100)
          expect(fs.statSync(path.join(root, "sizes", "big.txt")).size).toBe(101)
          expect(pathsOf(r.matches)).toEqual(["sizes/exact.txt"])
        })
      )
  )
  it.effect("file symlinks are not searched and directory symlinks are not traversed", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.search("wd", "LINKHIT", "links")
        expect(r.matches).toEqual([{ path: "links/real.txt", line: 1, text: "LINKHIT real" }])
        const lines = yield* a.search("wd", "LINEHIT", "links")
        expect(lines.matches).toEqual([])
      })
    )
  )
  it.effect("VCS dirs are excluded even with hidden allowed (also nested, also through a glob)", () =>
    withChannels(hiddenVars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.search("wd", "VCSHIT", "vcs")
        expect(pathsOf(r.matches)).toEqual(["vcs/.hidden.txt", "vcs/nested/kept.txt", "vcs/plain.txt"])
        for (const glob of [".git/**", "**/HEAD", "**/.git/**", "**/config", "store"]) {
          expect((yield* a.search("wd", "VCSHIT", "vcs", { glob })).matches, glob).toEqual([])
        }
      })
    )
  )
  it.effect("with hidden off, hidden files are not searched at all", () =>
    withChannels(vars, (a) =>
      Effect.map(a.search("wd", "VCSHIT", "vcs"), (r) => {
        expect(pathsOf(r.matches)).toEqual(["vcs/nested/kept.txt", "vcs/plain.txt"])
      })
    )
  )
  it.effect("reserved temp files and the sentinel are never searched, in any configuration", () =>
    Effect.forEach([vars, hiddenVars, { ...hiddenVars, SERVERFS_DISABLE_DEFAULT_DENY: "true" }], (v) =>
      withChannels(v, (a) =>
        Effect.gen(function* () {
          const r = yield* a.search("wd", "RESHIT", "reserved")
          expect(r.matches).toEqual([{ path: "reserved/ok.txt", line: 1, text: "RESHIT ok" }])
          const g = yield* a.search("wd", "RESHIT", "reserved", { glob: ".serverfs-*" })
          expect(g.matches).toEqual([])
        })
      )
    )
  )
  it.effect("denied names are passed to ripgrep as excludes, so it never reads them", () =>
    withChannels({ ...vars, SERVERFS_SEARCH_TIMEOUT_SECONDS: "0.5" }, (a) =>
      // A flood in a name-denied file would exceed the deadline if rg read it.
      Effect.sync(() =>
        fs.writeFileSync(path.join(root, "flood", "big.deny"), "FLOOD\n".repeat(200_000))
      ).pipe(
        Effect.zipRight(a.search("wd", "FLOOD", "flood", { glob: "*.deny" })),
        Effect.map((r) => expect(r.matches).toEqual([])),
        Effect.ensuring(Effect.sync(() => fs.rmSync(path.join(root, "flood", "big.deny"))))
      )
    )
  )
  it.effect(
    "built-in credential names in any letter case are ripgrep excludes too, so it never reads them",
    () =>
      withChannels({ ...hiddenVars, SERVERFS_SEARCH_TIMEOUT_SECONDS: "0.5" }, (a) =>
        Effect.forEach(
          [
            ["KEY.PEM", "*.PEM"],
            ["Id_Rsa", "Id_*"],
            ["Foo.Env", "Foo*"],
            [".ENV", ".E*"],
            [".Ssh/known_hosts", "**/known_hosts"]
          ] as const,
          ([name, glob]) => {
            const file = path.join(root, "flood", name)
            return Effect.sync(() => {
              fs.mkdirSync(path.dirname(file), { recursive: true })
              fs.writeFileSync(file, "FLOOD\n".repeat(200_000))
            }).pipe(
              Effect.zipRight(a.search("wd", "FLOOD", "flood", { glob })),
              // (The glob keeps rg away from flood/flood.txt, which only a path glob denies.)
              Effect.map((r) => expect(r.matches, name).toEqual([])),
              Effect.ensuring(
                Effect.sync(() =>
                  fs.rmSync(path.join(root, "flood", name.split("/")[0]!), { recursive: true })
                )
              )
            )
          }
        )
      )
  )
  it.effect("denied files and subtrees never appear in results", () =>
    withChannels(vars, (a) =>
      Effect.map(a.search("wd", "DENYHIT"), (r) => {
        expect(r.matches).toEqual([])
      })
    )
  )
})

describe("ignore files never hide anything", () => {
  it.effect(".gitignore and .ignore files are not honoured: search sees what find_files sees", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.search("wd", "IGNHIT", "ignores")
        expect(pathsOf(r.matches)).toEqual([
          "ignores/ignored-by-git.txt",
          "ignores/ignored-by-ignore.txt",
          "ignores/kept.txt"
        ])
      })
    )
  )
  it.effect("results do not depend on the directory a search starts from", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const fromRoot = (yield* a.search("wd", "IGNHIT")).matches.filter((m) =>
          m.path.startsWith("ignores/")
        )
        const fromDir = (yield* a.search("wd", "IGNHIT", "ignores")).matches
        expect(sorted(fromDir)).toEqual(sorted(fromRoot))
        expect((yield* a.search("wd", "TOPHIT")).matches).toEqual([
          { path: "top.txt", line: 1, text: "TOPHIT" }
        ])
      })
    )
  )
})

describe("VCS directories as the search root", () => {
  it.effect("searching inside .git with hidden paths allowed finds nothing", () =>
    withChannels(hiddenVars, (a) =>
      Effect.gen(function* () {
        expect((yield* a.search("wd", "VCSHIT", "vcs/.git")).matches).toEqual([])
        expect((yield* a.search("wd", "VCSHIT", "vcs/nested/.git")).matches).toEqual([])
      })
    )
  )
})

describe("limit and truncated", () => {
  it.effect("truncated only when MORE than limit matches exist (exactly limit → false)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const exact = yield* a.search("wd", "CNT", "count", { limit: 3 })
        expect([exact.returned, exact.truncated]).toEqual([3, false])
        const more = yield* a.search("wd", "CNT", "count", { limit: 2 })
        expect([more.returned, more.truncated]).toEqual([2, true])
        const room = yield* a.search("wd", "CNT", "count", { limit: 50 })
        expect([room.returned, room.truncated]).toEqual([3, false])
        const one = yield* a.search("wd", "MANY", "many", { limit: 1 })
        expect([one.returned, one.truncated]).toEqual([1, true])
        const all = yield* a.search("wd", "MANY", "many", { limit: 24 })
        expect([all.returned, all.truncated]).toEqual([24, false])
        const allButOne = yield* a.search("wd", "MANY", "many", { limit: 23 })
        expect([allButOne.returned, allButOne.truncated]).toEqual([23, true])
      })
    )
  )
  it.effect(
    "matches the verifier refuses (a UTF-16 file rg transcodes) neither use the limit nor set truncated",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          const r = yield* a.search("wd", "BYTEHIT", "bytes", { limit: 1, glob: "utf16.txt" })
          expect(r).toEqual({ matches: [], returned: 0, truncated: false })
          const two = yield* a.search("wd", "BYTEHIT", "bytes", { limit: 2 })
          expect(sorted(two.matches).map((m) => m.text)).toEqual(["BYTEHIT good", "BYTEHIT ok"])
          expect(two.truncated).toBe(false)
        })
      )
  )
  it.effect("limit is capped by SERVERFS_MAX_SEARCH_RESULTS", () =>
    withChannels({ ...vars, SERVERFS_MAX_SEARCH_RESULTS: "5" }, (a) =>
      Effect.map(a.search("wd", "MANY", "many", { limit: 50 }), (r) => {
        expect([r.returned, r.truncated]).toEqual([5, true])
      })
    )
  )
})

describe("errors", () => {
  it.effect("a denied root → DENIED_PATH; a file root → NOT_A_DIRECTORY; missing → PATH_NOT_FOUND", () =>
    withChannels(vars, (a) =>
      Effect.all([
        expectCode(
          a.search("wd", "x", "internal"),
          "DENIED_PATH",
          "DENIED_PATH: wd:internal — path is denied by policy"
        ),
        expectCode(
          a.search("wd", "x", "file.txt"),
          "NOT_A_DIRECTORY",
          "NOT_A_DIRECTORY: wd:file.txt — not a directory"
        ),
        expectCode(a.search("wd", "x", "nope"), "PATH_NOT_FOUND"),
        expectCode(a.search("wd", "x", "links/dir-link"), "SYMLINK_NOT_ALLOWED")
      ])
    )
  )
  it.effect("a malformed glob → SEARCH_FAILED: content search failed.", () =>
    withChannels(vars, (a) =>
      Effect.forEach(["[", "a[", "{a,b"], (glob) =>
        expectCode(
          a.search("wd", "x", "", { glob }),
          "SEARCH_FAILED",
          "SEARCH_FAILED: content search failed."
        )
      )
    )
  )
  it.effect(
    "a search that cannot finish in SERVERFS_SEARCH_TIMEOUT_SECONDS → SEARCH_TIMEOUT naming wd:path and the deadline",
    () =>
      // 200 000 matching lines, all in a file denied by a path glob: rg must print (≈50 MB of
      // JSON) and we must parse and reject each one, which takes seconds, far beyond 0.05 s.
      withChannels({ ...vars, SERVERFS_SEARCH_TIMEOUT_SECONDS: "0.05" }, (a) =>
        expectCode(
          a.search("wd", "FLOOD", "flood"),
          "SEARCH_TIMEOUT",
          "SEARCH_TIMEOUT: search in wd:flood exceeded 0.05s"
        )
      )
  )
  it.effect(
    "control: the same flood search completes with a long deadline and returns only the allowed file",
    () =>
      withChannels({ ...vars, SERVERFS_SEARCH_TIMEOUT_SECONDS: "55" }, (a) =>
        Effect.map(a.search("wd", "FLOOD", "flood"), (r) => {
          expect(r).toEqual({
            matches: [{ path: "flood/ok.txt", line: 1, text: "FLOOD ok" }],
            returned: 1,
            truncated: false
          })
        })
      )
  )
})

describe("hygiene", () => {
  it("no error text of this suite contains a host path, an inode number, the query or a temp name", () => {
    const entries = recordedErrors()
    expect(expectHygienic(entries, defaultForbidden())).toBeGreaterThan(5)
    for (const e of entries) expect(e.text).not.toMatch(/FLOOD|GLOBHIT/)
  })
})
