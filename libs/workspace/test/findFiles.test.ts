/**
 * find_files (tool-contracts §2.3): case-sensitive fnmatch on base names, regular files only,
 * symlinked directories never entered, hidden/denied pruned, `.git` matchable with hidden
 * allowed, truncated at exactly the limit or at the walk cap, and the root errors.
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
import { buildTree, closeSockets, makeBase, removeBase } from "./fixtures/tree.js"

let base = ""
let root = ""
let vars: Vars = {}

beforeAll(async () => {
  base = makeBase("serverfs-ws-find-")
  root = path.join(base, "wd")
  const outside = path.join(base, "outside")
  fs.mkdirSync(root)
  await buildTree(base, { outside: { dir: { "target.txt": "outside", "secret.md": "outside" } } })
  await buildTree(root, {
    "Readme.md": "",
    "readme.md": "",
    "README.MD": "",
    "a.txt": "",
    "b.txt": "",
    "ab.txt": "",
    "[x].txt": "",
    "star*.txt": "",
    "back\\slash.txt": "",
    "é.txt": "",
    "\u{1F600}.txt": "",
    "match.dir": { dir: { "inner.txt": "" } },
    "link.txt": { symlink: "a.txt" },
    "fifo.txt": { fifo: true },
    "sock.txt": { socket: true },
    docs: { dir: { "guide.md": "", deep: { dir: { "deeper.md": "", a: { dir: { "a.txt": "" } } } } } },
    a: { dir: { a: { dir: { "a.txt": "" } } } },
    real: { dir: { "target.txt": "" } },
    "link-dir": { symlink: "real" },
    "link-outside": { symlink: outside },
    ".hidden": { dir: { "target.txt": "" } },
    ".git": { dir: { config: "", objects: { dir: { "target.txt": "" } } } },
    "keys.pem": { dir: { "target.txt": "" } },
    internal: { dir: { "target.txt": "", sub: { dir: { "target.txt": "" } } } },
    id_rsa: "",
    ".serverfs-tmp-target.txt": "",
    three: { dir: { "m1.log": "", "m2.log": "", "m3.log": "", "other.txt": "" } },
    hostile: {
      dir: Object.fromEntries(
        ["quarterly-financial-report-2024-final-version.txt", "x".repeat(255), `${"x".repeat(254)}y`].map(
          (name) => [name, ""]
        )
      )
    }
  })
  vars = workdirVars(root, { SERVERFS_EXTRA_DENY_GLOBS: "internal/**" })
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

const paths = (r: { readonly matches: ReadonlyArray<{ readonly path: string }> }) =>
  r.matches.map((m) => m.path).sort()

describe("patterns: case-sensitive fnmatch on the base name", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["readme.md", ["readme.md"]],
    ["Readme.md", ["Readme.md"]],
    ["*.MD", ["README.MD"]],
    ["?.txt", ["a.txt", "a/a/a.txt", "b.txt", "docs/deep/a/a.txt", "é.txt", "\u{1F600}.txt"]],
    ["[ab].txt", ["a.txt", "a/a/a.txt", "b.txt", "docs/deep/a/a.txt"]],
    ["[!a].txt", ["b.txt", "é.txt", "\u{1F600}.txt"]],
    ["a*", ["a.txt", "a/a/a.txt", "ab.txt", "docs/deep/a/a.txt"]],
    ["*.md", ["Readme.md", "docs/deep/deeper.md", "docs/guide.md", "readme.md"]],
    ["docs/*.md", ["docs/guide.md"]], // a path glob (findFilesPathGlob.test.ts)
    ["[[]x].txt", ["[x].txt"]],
    ["star[*].txt", ["star*.txt"]],
    ["back\\slash.txt", ["back\\slash.txt"]],
    ["*.log", ["three/m1.log", "three/m2.log", "three/m3.log"]],
    ["nothing-matches", []]
  ]
  for (const [pattern, expected] of cases) {
    it.effect(`pattern ${JSON.stringify(pattern)} → ${JSON.stringify(expected)}`, () =>
      withChannels(vars, (a) =>
        Effect.map(a.find("wd", pattern, "", { limit: 100 }), (r) => {
          expect(paths(r)).toEqual([...expected].sort())
          expect(r.returned).toBe(expected.length)
          expect(r.truncated).toBe(false)
        })
      )
    )
  }
})

describe("attack: patterns that backtrack as regular expressions end at once", () => {
  // The reproduction (a RegExp translation pinned the CPU for minutes), and the same
  // shapes at the maximum pattern length (SERVERFS_MAX_PATTERN_LENGTH, 1024) against names of
  // up to NAME_MAX. Liveness bound only: seconds, against a call that used to take hours.
  const hostile: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["*?*?*?*?*?*?*?*?*?*?*?*?Z", []],
    [`${"*?".repeat(511)}Z`, []],
    ["*x".repeat(512), []],
    ["*x".repeat(120), [`hostile/${"x".repeat(255)}`]],
    [`${"*x".repeat(511)}*c`, []],
    [`*${"x".repeat(1022)}y`, []],
    [`${"*[!y]".repeat(204)}*y`, [`hostile/${"x".repeat(254)}y`]]
  ]
  it.effect(
    "each hostile find_files pattern answers correctly within seconds, and the server keeps answering",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          const started = performance.now()
          for (const [pattern, expected] of hostile) {
            expect(pattern.length).toBeLessThanOrEqual(1024)
            const [found, listed] = yield* Effect.all(
              [a.find("wd", pattern, "hostile", { limit: 100 }), a.list("wd", "hostile")],
              { concurrency: 2 }
            )
            expect(paths(found), pattern.slice(0, 40)).toEqual(expected)
            expect(listed.entries).toHaveLength(3)
          }
          expect(performance.now() - started).toBeLessThan(5000)
        })
      )
  )
})

describe("what can match and what is walked", () => {
  it.effect("only regular files match: not directories, symlinks, FIFOs or sockets", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        expect(paths(yield* a.find("wd", "match.dir"))).toEqual([])
        expect(paths(yield* a.find("wd", "link*"))).toEqual([])
        expect(paths(yield* a.find("wd", "fifo.txt"))).toEqual([])
        expect(paths(yield* a.find("wd", "sock.txt"))).toEqual([])
        expect(paths(yield* a.find("wd", "inner.txt"))).toEqual(["match.dir/inner.txt"])
      })
    )
  )
  it.effect(
    "symlinked directories (inside or outside) are never entered; hidden, denied, reserved pruned",
    () =>
      withChannels(vars, (a) =>
        Effect.map(a.find("wd", "target.txt", "", { limit: 100 }), (r) => {
          expect(paths(r)).toEqual(["real/target.txt"])
        })
      )
  )
  it.effect("a denied directory's subtree never appears, even from a find rooted above it", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const all = paths(yield* a.find("wd", "*", "", { limit: 100 }))
        expect(
          all.filter((p) => /^(internal|keys\.pem|\.git|\.hidden|link)/.test(p) || p.includes("serverfs"))
        ).toEqual([])
        expect(all).not.toContain("id_rsa")
      })
    )
  )
  it.effect("with hidden allowed, `.git/...` files can match (find does not exclude VCS dirs)", () =>
    withChannels(workdirVars(root, { WORKDIR_01_ALLOW_HIDDEN: "true" }), (a) =>
      Effect.gen(function* () {
        expect(paths(yield* a.find("wd", "config"))).toEqual([".git/config"])
        expect(paths(yield* a.find("wd", "target.txt", "", { limit: 100 }))).toEqual([
          ".git/objects/target.txt",
          ".hidden/target.txt",
          "internal/sub/target.txt",
          "internal/target.txt",
          "real/target.txt"
        ])
        expect(paths(yield* a.find("wd", "*.txt", ".git"))).toEqual([".git/objects/target.txt"])
      })
    )
  )
  it.effect("result paths carry the search-root prefix and keep repeated directory names (a/a/a.txt)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        expect(paths(yield* a.find("wd", "a.txt", "a"))).toEqual(["a/a/a.txt"])
        expect(paths(yield* a.find("wd", "a.txt", "./a/a/"))).toEqual(["a/a/a.txt"])
        expect(paths(yield* a.find("wd", "*.md", "docs"))).toEqual(["docs/deep/deeper.md", "docs/guide.md"])
        expect(paths(yield* a.find("wd", "*.md", "docs/deep/.."))).toEqual([
          "docs/deep/deeper.md",
          "docs/guide.md"
        ])
      })
    )
  )
})

describe("limits and truncation", () => {
  it.effect("truncated=true when the matches reach the limit, even at exactly the limit", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const exact = yield* a.find("wd", "*.log", "three", { limit: 3 })
        expect([exact.returned, exact.truncated]).toEqual([3, true])
        const fewer = yield* a.find("wd", "*.log", "three", { limit: 2 })
        expect([fewer.returned, fewer.truncated]).toEqual([2, true])
        const room = yield* a.find("wd", "*.log", "three", { limit: 4 })
        expect([room.returned, room.truncated]).toEqual([3, false])
      })
    )
  )
  it.effect("limit is capped by SERVERFS_MAX_SEARCH_RESULTS", () =>
    withChannels(workdirVars(root, { SERVERFS_MAX_SEARCH_RESULTS: "2" }), (a) =>
      Effect.map(a.find("wd", "*.log", "three", { limit: 50 }), (r) => {
        expect([r.returned, r.truncated]).toEqual([2, true])
      })
    )
  )
  it.effect("the walk stops at SERVERFS_MAX_WALK_ENTRIES with truncated=true", () =>
    Effect.all([
      withChannels(workdirVars(root, { SERVERFS_MAX_WALK_ENTRIES: "3" }), (a) =>
        Effect.map(a.find("wd", "*.log", "three"), (r) => {
          // three/ holds 4 entries: visiting the 4th exceeds the cap.
          expect(r.truncated).toBe(true)
          expect(r.returned).toBeLessThanOrEqual(3)
        })
      ),
      withChannels(workdirVars(root, { SERVERFS_MAX_WALK_ENTRIES: "4" }), (a) =>
        Effect.map(a.find("wd", "*.log", "three"), (r) => {
          expect([r.returned, r.truncated]).toEqual([3, false])
        })
      ),
      withChannels(workdirVars(root, { SERVERFS_MAX_WALK_ENTRIES: "10" }), (a) =>
        Effect.map(a.find("wd", "nothing-matches"), (r) => {
          expect([r.returned, r.truncated]).toEqual([0, true])
        })
      )
    ])
  )
})

describe("root errors", () => {
  it.effect(
    "missing root → PATH_NOT_FOUND; file root → NOT_A_DIRECTORY; symlinked root → SYMLINK_NOT_ALLOWED",
    () =>
      withChannels(vars, (a) =>
        Effect.all([
          expectCode(
            a.find("wd", "*", "missing"),
            "PATH_NOT_FOUND",
            "PATH_NOT_FOUND: wd:missing — no such file or directory"
          ),
          expectCode(
            a.find("wd", "*", "a.txt"),
            "NOT_A_DIRECTORY",
            "NOT_A_DIRECTORY: wd:a.txt — not a directory"
          ),
          expectCode(a.find("wd", "*", "link-dir"), "SYMLINK_NOT_ALLOWED"),
          expectCode(a.find("wd", "*", "link-outside"), "SYMLINK_NOT_ALLOWED"),
          expectCode(a.find("wd", "*", "link-dir/x"), "SYMLINK_NOT_ALLOWED")
        ])
      )
  )
  it.effect("a denied or hidden root → DENIED_PATH / HIDDEN_PATH_NOT_ALLOWED", () =>
    withChannels(vars, (a) =>
      Effect.all([
        expectCode(a.find("wd", "*", "internal"), "DENIED_PATH"),
        expectCode(a.find("wd", "*", "internal/sub"), "DENIED_PATH"),
        expectCode(a.find("wd", "*", "keys.pem"), "DENIED_PATH"),
        expectCode(a.find("wd", "*", ".git"), "HIDDEN_PATH_NOT_ALLOWED"),
        expectCode(a.find("wd", "*", ".hidden"), "HIDDEN_PATH_NOT_ALLOWED")
      ])
    )
  )
})

describe("hygiene", () => {
  it("no error text of this suite contains a host path, an inode number or a temp name", () => {
    expect(expectHygienic(recordedErrors(), defaultForbidden())).toBeGreaterThan(5)
  })
})
