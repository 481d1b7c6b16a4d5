/**
 * find_files path globs (a pattern with "/"): matched against the path below the search
 * directory with git's wildmatch semantics, compared with `git ls-files ':(glob)<pattern>'` on
 * the same tree; hidden, denied and reserved entries and symlinked directories stay out even when
 * the glob names them; a directory nothing below which can match is not walked.
 */
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { type Vars, withChannels, workdirVars } from "./fixtures/channels.js"
import { buildTree, closeSockets, makeBase, removeBase } from "./fixtures/tree.js"

const hasGit = spawnSync("git", ["--version"]).status === 0

let base = ""
let root = ""
let plain = ""
let vars: Vars = {}

/** A tree without hidden or denied names, for the comparison with git. */
const PLAIN_FILES: ReadonlyArray<string> = (() => {
  const files: string[] = []
  const visit = (prefix: string, depth: number) => {
    for (const name of ["a.md", "b.ts", "test_a.py", "ab"]) files.push(`${prefix}${name}`)
    if (depth < 3) for (const dir of ["src", "a", "b"]) visit(`${prefix}${dir}/`, depth + 1)
  }
  visit("", 0)
  return files
})()

const git = (args: ReadonlyArray<string>): string => {
  const run = spawnSync("git", ["-c", "core.quotepath=off", ...args], {
    cwd: plain,
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: plain, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  })
  if (run.error !== undefined) throw run.error
  if (run.status !== 0) throw new Error(`git ${args[0]} failed (${String(run.status)}): ${run.stderr}`)
  return run.stdout
}

beforeAll(async () => {
  base = makeBase("serverfs-ws-findglob-")
  root = path.join(base, "wd")
  const outside = path.join(base, "outside")
  fs.mkdirSync(root)
  await buildTree(base, { outside: { dir: { "target.md": "outside" } } })
  await buildTree(root, {
    "top.md": "",
    "fifo.md": { fifo: true },
    "link.md": { symlink: "top.md" },
    docs: { dir: { "guide.md": "", "notes.txt": "", deep: { dir: { "deeper.md": "" } } } },
    src: {
      dir: {
        "test_x.py": "",
        "x.py": "",
        pkg: { dir: { "test_y.py": "", tests: { dir: { "test_z.py": "" } } } }
      }
    },
    real: { dir: { "target.md": "" } },
    "link-dir": { symlink: "real" },
    "link-outside": { symlink: outside },
    ".hidden": { dir: { "target.md": "" } },
    ".git": { dir: { config: "", objects: { dir: { "target.md": "" } } } },
    "keys.pem": { dir: { "target.md": "" } },
    internal: { dir: { "target.md": "", sub: { dir: { "target.md": "" } } } },
    id_rsa: "",
    ".serverfs-tmp-x.md": "",
    docs2: { dir: { ".serverfs-tmp-y.md": "", "y.md": "" } }
  })
  // 120 nested directories with long names, each holding a file whose name almost matches.
  let chain = path.join(root, "deep")
  for (let i = 0; i < 120; i++) {
    chain = path.join(chain, "a".repeat(30))
    fs.mkdirSync(chain, { recursive: true })
    fs.writeFileSync(path.join(chain, `${"a".repeat(200)}c`), "")
  }
  vars = workdirVars(root, { SERVERFS_EXTRA_DENY_GLOBS: "internal/**" })

  plain = path.join(base, "plain")
  for (const file of PLAIN_FILES) {
    fs.mkdirSync(path.join(plain, path.dirname(file)), { recursive: true })
    fs.writeFileSync(path.join(plain, file), "")
  }
  if (hasGit) {
    git(["init", "-q"])
    git(["add", "-A"])
  }
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

const paths = (r: { readonly matches: ReadonlyArray<{ readonly path: string }> }) =>
  r.matches.map((m) => m.path).sort()

describe("a pattern with / matches the path below the search directory", () => {
  const cases: ReadonlyArray<readonly [pattern: string, from: string, expected: ReadonlyArray<string>]> = [
    ["**/*.md", "", ["docs/deep/deeper.md", "docs/guide.md", "docs2/y.md", "real/target.md", "top.md"]],
    ["*/*.md", "", ["docs/guide.md", "docs2/y.md", "real/target.md"]],
    ["docs/*.md", "", ["docs/guide.md"]],
    ["docs/**", "", ["docs/deep/deeper.md", "docs/guide.md", "docs/notes.txt"]],
    ["docs/**/*.md", "", ["docs/deep/deeper.md", "docs/guide.md"]],
    ["src/**/test_*.py", "", ["src/pkg/test_y.py", "src/pkg/tests/test_z.py", "src/test_x.py"]],
    ["**/tests/*", "", ["src/pkg/tests/test_z.py"]],
    ["/top.md", "", ["top.md"]],
    ["d*/[^n]*", "", ["docs/guide.md", "docs2/y.md"]],
    // a literal path names one file, never a directory's contents
    ["docs/guide.md", "", ["docs/guide.md"]],
    ["docs/deep", "", []],
    // relative to the search directory, results still workdir-relative
    ["deep/*.md", "docs", ["docs/deep/deeper.md"]],
    ["**/*.md", "docs", ["docs/deep/deeper.md", "docs/guide.md"]],
    ["docs/*.md", "docs", []],
    ["**/test_*.py", "src/pkg", ["src/pkg/test_y.py", "src/pkg/tests/test_z.py"]],
    // never: trailing slash, directories, symlinks, FIFOs
    ["docs/", "", []],
    ["*/deep", "", []],
    ["**/link.md", "", []],
    ["**/fifo.md", "", []],
    ["link-dir/*", "", []],
    ["link-outside/**", "", []]
  ]
  for (const [pattern, from, expected] of cases) {
    it.effect(`${JSON.stringify(pattern)} from ${JSON.stringify(from)} → ${JSON.stringify(expected)}`, () =>
      withChannels(vars, (a) =>
        Effect.map(a.find("wd", pattern, from, { limit: 100 }), (r) => {
          expect(paths(r)).toEqual([...expected].sort())
          expect(r.truncated).toBe(false)
        })
      )
    )
  }
})

describe("attack: hidden, denied and reserved entries stay out even when the glob names them", () => {
  const named = [
    ".hidden/*",
    ".hidden/**",
    ".git/**",
    ".git/objects/target.md",
    "internal/**",
    "internal/sub/target.md",
    "keys.pem/*",
    "**/target.md",
    "**/.serverfs-tmp-*",
    "docs2/.serverfs-*",
    "**/id_rsa",
    "*/../top.md",
    "./top.md",
    "../wd/top.md"
  ]
  it.effect("each such glob finds only what the policy shows", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        for (const pattern of named) {
          const found = paths(yield* a.find("wd", pattern, "", { limit: 100 }))
          expect(found, pattern).toEqual(pattern === "**/target.md" ? ["real/target.md"] : [])
        }
      })
    )
  )
  it.effect("with hidden allowed, .git and .hidden files match; denied and reserved still do not", () =>
    withChannels(
      workdirVars(root, { SERVERFS_EXTRA_DENY_GLOBS: "internal/**", WORKDIR_01_ALLOW_HIDDEN: "true" }),
      (a) =>
        Effect.gen(function* () {
          expect(paths(yield* a.find("wd", "**/target.md", "", { limit: 100 }))).toEqual([
            ".git/objects/target.md",
            ".hidden/target.md",
            "real/target.md"
          ])
          expect(paths(yield* a.find("wd", "**/.serverfs-*", "", { limit: 100 }))).toEqual([])
        })
    )
  )
})

describe("attack: path globs full of ** and * end at once on a deep tree", () => {
  // Liveness bound only (seconds): a backtracking matcher takes exponential time on these.
  const hostile = [
    `${"**/".repeat(300)}*b`,
    `${"**/*a*a*a/".repeat(90)}*b`,
    `${"*/**/".repeat(180)}${"*a".repeat(20)}b`,
    `**/${"*a".repeat(500)}*b`
  ]
  it.effect("each answers correctly within seconds while list_directory keeps answering", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const started = performance.now()
        for (const pattern of hostile) {
          expect(pattern.length).toBeLessThanOrEqual(1024)
          const [found, listed] = yield* Effect.all(
            [a.find("wd", pattern, "deep", { limit: 100 }), a.list("wd", "deep")],
            { concurrency: 2 }
          )
          expect(paths(found), pattern.slice(0, 40)).toEqual([])
          expect(listed.entries).toHaveLength(1)
        }
        expect(performance.now() - started).toBeLessThan(5000)
      })
    )
  )
})

describe("the walk skips directories nothing below which can match", () => {
  it.effect("a glob anchored in docs/ stays within the walk cap that a whole-tree walk exceeds", () =>
    withChannels(workdirVars(root, { SERVERFS_MAX_WALK_ENTRIES: "20" }), (a) =>
      Effect.gen(function* () {
        const everything = yield* a.find("wd", "*.md", "", { limit: 100 })
        expect(everything.truncated).toBe(true)
        const anchored = yield* a.find("wd", "docs/deep/*.md", "", { limit: 100 })
        expect([paths(anchored), anchored.truncated]).toEqual([["docs/deep/deeper.md"], false])
      })
    )
  )
})

describe("the same selection as git ls-files ':(glob)…' on a plain tree", () => {
  const HAND = [
    "**/*.md",
    "src/**/test_*.py",
    "**/src/*",
    "*/*/ab",
    "a/**",
    "**/b/**/*.ts",
    "?/[ab]*",
    "src/*/*/*"
  ]
  const TOKENS = ["a", "b", "src", ".md", "*", "**", "?", "/", "[ab]", "[!a]", "test_"]
  const generated = FastCheck.sample(
    FastCheck.array(FastCheck.constantFrom(...TOKENS), { minLength: 2, maxLength: 7 })
      .map((tokens) => tokens.join(""))
      // Starting "/" is refused by git; a run of stars inside a component is read by git's
      // pathspec layer differently from wildmatch (see libs/policy/test/pathGlob.test.ts).
      .filter(
        (p) => p.includes("/") && !p.startsWith("/") && /[*?[]/.test(p) && !/[^/*]\*\*|\*\*[^/*]/.test(p)
      ),
    { numRuns: 60, seed: 13 }
  )
  it.effect.skipIf(!hasGit)("hand-written and generated globs", () =>
    withChannels(workdirVars(plain, { SERVERFS_MAX_SEARCH_RESULTS: "1000" }), (a) =>
      Effect.gen(function* () {
        const disagreements: Array<{ pattern: string; ours: string[]; git: string[] }> = []
        for (const pattern of [...HAND, ...generated]) {
          const found = yield* a.find("wd", pattern, "", { limit: 1000 })
          expect(found.truncated).toBe(false)
          const ours = paths(found)
          const theirs = git(["ls-files", "-z", "--", `:(glob)${pattern}`])
            .split("\0")
            .filter((p) => p !== "")
            .sort()
          if (JSON.stringify(ours) !== JSON.stringify(theirs))
            disagreements.push({ pattern, ours, git: theirs })
        }
        expect(disagreements).toEqual([])
      })
    )
  )
})
