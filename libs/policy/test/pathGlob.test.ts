/**
 * find_files path globs (PathGlob.ts) against an independent oracle: git's wildmatch, through
 * `git ls-files -- ':(glob)<pattern>'` in a scratch repository holding the same tree. Hand-written
 * patterns and generated ones over a small alphabet (`*`, `**`, `?`, `/`, `[ab]`, …) must select
 * exactly the files git selects; adversarial patterns end at once (liveness bound only).
 */
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { compilePathGlob, isPathGlob, matchPath } from "@serverfs/policy"
import { FastCheck } from "effect"
import { makeTempDir, removeTempDir } from "./helpers.js"

const hasGit = spawnSync("git", ["--version"]).status === 0

/** Every file of the tree: in each directory (depth ≤ 3 over `a`, `b`, `ab`), these names. */
const DIRECTORY_NAMES = ["a", "b", "ab"]
const FILE_NAMES = ["a.md", "ba", "aab", "b.a"]
const TREE: ReadonlyArray<string> = (() => {
  const files: string[] = []
  const visit = (prefix: string, depth: number) => {
    for (const name of FILE_NAMES) files.push(`${prefix}${name}`)
    if (depth < 3) for (const dir of DIRECTORY_NAMES) visit(`${prefix}${dir}/`, depth + 1)
  }
  visit("", 0)
  return files.sort()
})()

let repo = ""

const git = (args: ReadonlyArray<string>): string => {
  const run = spawnSync("git", ["-c", "core.quotepath=off", ...args], {
    cwd: repo,
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: repo, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  })
  if (run.error !== undefined) throw run.error
  if (run.status !== 0) throw new Error(`git ${args[0]} failed (${String(run.status)}): ${run.stderr}`)
  return run.stdout
}

/**
 * The pattern with each run of stars that is not a whole component written as one star: the
 * same pattern for wildmatch ("other consecutive asterisks are considered regular asterisks"),
 * but git's pathspec code strips a pattern's literal prefix before calling wildmatch, so in
 * `a**` followed by a slash the stars end up at the start and span directories there (a quirk of
 * the pathspec layer, not of wildmatch, which find_files does not copy).
 */
const asGitReads = (pattern: string): string =>
  pattern
    .split("/")
    .map((part) => (/^\*+$/.test(part) ? part : part.replace(/\*+/g, "*")))
    .join("/")

/** The files git's `:(glob)` pathspec selects (a literal pattern: the file itself only). */
const gitSelects = (pattern: string): string[] => {
  const listed = git(["ls-files", "-z", "--", `:(glob)${asGitReads(pattern)}`])
    .split("\0")
    .filter((p) => p !== "")
  // Without a wildcard, git's pathspec also selects everything below a directory it names (a
  // prefix rule of pathspecs, not of wildmatch); a path glob names files only.
  const literal = !/[*?[]/.test(pattern)
  const normalized = pattern.replace(/\/+/g, "/")
  return (literal ? listed.filter((p) => p === normalized) : listed).sort()
}

const ourSelection = (pattern: string): string[] => {
  const glob = compilePathGlob(pattern)
  return TREE.filter((p) => matchPath(glob, p))
}

beforeAll(() => {
  if (!hasGit) return
  repo = makeTempDir("serverfs-pathglob-")
  for (const file of TREE) {
    fs.mkdirSync(path.join(repo, path.dirname(file)), { recursive: true })
    fs.writeFileSync(path.join(repo, file), "")
  }
  git(["init", "-q"])
  git(["add", "-A"])
})

afterAll(() => {
  if (repo !== "") removeTempDir(repo)
})

describe("path globs: a pattern with / is matched against the path (git wildmatch)", () => {
  it("a pattern is a path glob exactly when it contains /", () => {
    expect(isPathGlob("**/*.md")).toBe(true)
    expect(isPathGlob("docs/")).toBe(true)
    expect(isPathGlob("*.md")).toBe(false)
    expect(isPathGlob("**")).toBe(false)
  })

  const HAND: ReadonlyArray<string> = [
    "**/*.md",
    "**/a.md",
    "*/a.md",
    "a/*.md",
    "a/**",
    "a/**/*.md",
    "a/**/b/*",
    "**/b/**",
    "**/**/a.md",
    "**/**/**",
    "***/a.md",
    "a/***",
    "a**/*",
    "**a/*",
    "a/**b",
    "*/*",
    "*/*/*/*",
    "?/?.md",
    "[ab]/[!a]*",
    "[^a]/*",
    "a/[]a]*",
    "a/[a-b]?",
    "ab/*.[am]*",
    "a//a.md",
    "a/b/",
    "**/",
    "a/b/a.md",
    "a/b",
    "ab/ab/ab/b.a",
    "b/**/ab/**/a*"
  ]
  for (const pattern of HAND) {
    it.skipIf(!hasGit)(`${JSON.stringify(pattern)} selects what git's :(glob) selects`, () => {
      expect(ourSelection(pattern)).toEqual(gitSelects(pattern))
    })
  }

  it("a leading / anchors at the search directory (git refuses it; every path glob is anchored)", () => {
    expect(ourSelection("/a/*.md")).toEqual(["a/a.md"])
    expect(ourSelection("/**/b.a")).toEqual(TREE.filter((p) => p.endsWith("/b.a") || p === "b.a"))
  })

  it("a trailing /** needs at least one component below (never the directory itself)", () => {
    const glob = compilePathGlob("a/**")
    expect(matchPath(glob, "a")).toBe(false)
    expect(matchPath(glob, "a/x")).toBe(true)
    expect(matchPath(glob, "a/x/y/z")).toBe(true)
    expect(matchPath(compilePathGlob("**/a.md"), "a.md")).toBe(true)
  })

  it("a reversed range matches nothing, as in base-name patterns (git's matches its first end)", () => {
    expect(matchPath(compilePathGlob("a/[b-a]?"), "a/ba")).toBe(false)
    expect(matchPath(compilePathGlob("a/[cb-a]?"), "a/ca")).toBe(true)
  })

  it("a run of stars inside a component is one star: `a**/*` stays in one directory", () => {
    expect(ourSelection("a**/*")).toEqual(TREE.filter((p) => /^a[^/]*\/[^/]+$/.test(p)))
  })

  it("? is one code point, as in base-name patterns (git's wildmatch counts bytes)", () => {
    expect(matchPath(compilePathGlob("d/?.txt"), "d/\u{1F600}.txt")).toBe(true)
    expect(matchPath(compilePathGlob("d/?.txt"), "d/é.txt")).toBe(true)
  })

  it("a backslash is an ordinary character, an unclosed [ is literal (as in base-name patterns)", () => {
    expect(matchPath(compilePathGlob("d/back\\slash"), "d/back\\slash")).toBe(true)
    expect(matchPath(compilePathGlob("d/[x"), "d/[x")).toBe(true)
  })

  // Generated patterns over a small alphabet; a token list never starts with "/" (git refuses
  // such a pathspec) and never has a "." or ".." component (git normalizes those away).
  const TOKENS = ["a", "b", ".", "md", "*", "**", "?", "/", "[ab]", "[!a]", "[^b]", "/**/"]
  const patterns = FastCheck.array(FastCheck.constantFrom(...TOKENS), { minLength: 1, maxLength: 8 })
    .map((tokens) => tokens.join(""))
    .filter(
      (p) =>
        p.includes("/") && !p.startsWith("/") && p.split("/").every((part) => part !== "." && part !== "..")
    )

  it.skipIf(!hasGit)("generated patterns select what git's :(glob) selects", () => {
    const sample = FastCheck.sample(patterns, { numRuns: 300, seed: 13 })
    const disagreements = sample
      .map((pattern) => ({ pattern, ours: ourSelection(pattern), git: gitSelects(pattern) }))
      .filter((r) => JSON.stringify(r.ours) !== JSON.stringify(r.git))
    expect(disagreements).toEqual([])
  })
})

describe("attack: path globs are linear whatever the stars", () => {
  // Liveness bound only: a backtracking matcher takes hours on these; ours is
  // O(path length × pattern length).
  const deepPath = `${"a/".repeat(2000)}${"a".repeat(200)}`
  const hostile: ReadonlyArray<string> = [
    `${"**/".repeat(340)}*b`,
    `${"**/*a*a*a/".repeat(100)}*b`,
    `${"*a".repeat(300)}/**/${"*a".repeat(200)}b`,
    `${"**/?/".repeat(200)}b`,
    `${"*/**/".repeat(200)}${"*a".repeat(10)}b`
  ]
  for (const pattern of hostile) {
    it(`${pattern.length}-character pattern against a ${deepPath.length}-character path ends at once`, () => {
      const started = performance.now()
      expect(matchPath(compilePathGlob(pattern), deepPath)).toBe(false)
      expect(performance.now() - started).toBeLessThan(5000)
    })
  }
})
