/**
 * Deterministic interleavings, obtained by interposing on the calls the channels make:
 *
 * - FILE_CHANGED_DURING_READ (tool-contracts §2.5): `fstat` of the opened file is wrapped so the
 *   file is really modified on disk at an exact point of the read (after the revision was taken
 *   and before the data is read, or after the data was read and before the second fstat). The
 *   channel must refuse rather than return content that does not match its revision.
 * - search_text refusals (§2.4): `runRipgrep` is counted, so a refused root (DENIED_PATH, …)
 *   provably never starts ripgrep.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { expectCode, type Vars, withChannels, workdirVars } from "./fixtures/channels.js"
import { makeBase, removeBase } from "./fixtures/tree.js"

const hook = vi.hoisted(() => ({
  /** Inode of the file whose fstat calls are intercepted. */
  ino: undefined as bigint | undefined,
  /** Which intercepted fstat call (1-based) triggers `mutate`, and whether before or after it. */
  at: 0,
  when: "after" as "before" | "after",
  calls: 0,
  mutate: (): void => undefined,
  /** A file name whose openat fails with EMFILE (as if the descriptor table were full). */
  emfileFor: undefined as string | undefined
}))

vi.mock("@serverfs/posix", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@serverfs/posix")>()
  return {
    ...actual,
    openat: (dirfd: number, name: string, flags: number, mode?: number) => {
      if (name === hook.emfileFor) {
        throw Object.assign(new Error("EMFILE: too many open files, openat"), {
          code: "EMFILE",
          errno: -24,
          syscall: "openat"
        })
      }
      return actual.openat(dirfd, name, flags, mode)
    },
    fstat: (fd: number) => {
      const probe = actual.fstat(fd)
      if (hook.ino === undefined || probe.ino !== hook.ino) return probe
      hook.calls++
      if (hook.calls !== hook.at) return probe
      if (hook.when === "before") {
        hook.mutate()
        return actual.fstat(fd)
      }
      // "after": the caller gets the pre-change stat, then the file changes under it.
      hook.mutate()
      return probe
    }
  }
})

const rg = vi.hoisted(() => ({ starts: 0, raw: [] as string[] }))

vi.mock("../src/Ripgrep.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../src/Ripgrep.js")>()
  return {
    ...actual,
    runRipgrep: (...[options, accept]: Parameters<typeof actual.runRipgrep>) => {
      rg.starts++
      // Every path rg itself reports, before the channel's policy re-check sees it.
      return actual.runRipgrep(options, (match) => {
        rg.raw.push(match.path)
        return accept(match)
      })
    }
  }
})

let base = ""
let root = ""
let vars: Vars = {}

beforeAll(() => {
  base = makeBase("serverfs-ws-interposed-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  fs.mkdirSync(path.join(root, "internal"))
  fs.mkdirSync(path.join(root, ".ssh"))
  fs.writeFileSync(path.join(root, "internal", "x.txt"), "needle\n")
  fs.writeFileSync(path.join(root, "plain.txt"), "needle\n")
  fs.symlinkSync(path.join(root, "internal"), path.join(root, "link"))
  const res = path.join(root, "res")
  for (const dir of ["", ".serverfs-tmp-dir", ".git", "deep", "deep/.hg", "deep/.svn"])
    fs.mkdirSync(path.join(res, dir), { recursive: true })
  for (const file of [
    ".serverfs-tmp-a",
    ".serverfs-tmp-dir/inner.txt",
    ".serverfs-disabled",
    ".git/HEAD",
    "deep/.serverfs-tmp-b.txt",
    "deep/.hg/x",
    "deep/.svn/y",
    "deep/ok.txt",
    "ok.txt"
  ])
    fs.writeFileSync(path.join(res, file), "needle\n")
  vars = workdirVars(root, { SERVERFS_EXTRA_DENY_GLOBS: "internal/**", WORKDIR_01_ALLOW_HIDDEN: "true" })
})

afterAll(() => removeBase(base))

beforeEach(() => {
  hook.emfileFor = undefined
  hook.ino = undefined
  hook.calls = 0
  rg.starts = 0
  rg.raw = []
})

const arm = (file: string, at: number, when: "before" | "after", mutate: () => void) => {
  hook.ino = fs.statSync(file, { bigint: true }).ino
  hook.at = at
  hook.when = when
  hook.calls = 0
  hook.mutate = mutate
}

describe("FILE_CHANGED_DURING_READ", () => {
  const fresh = (name: string): string => {
    const file = path.join(root, name)
    fs.writeFileSync(file, "one\ntwo\nthree\n")
    return file
  }

  it.effect(
    "a file appended to after its revision was taken (before the data is read) → FILE_CHANGED_DURING_READ",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          const file = fresh("append-before.txt")
          // Call 1 is the fstat right after the open (the revision); the read follows it.
          arm(file, 1, "after", () => fs.appendFileSync(file, "four\n"))
          yield* expectCode(
            a.read("wd", "append-before.txt"),
            "FILE_CHANGED_DURING_READ",
            "FILE_CHANGED_DURING_READ: wd:append-before.txt — changed while being read; retry"
          )
          expect(hook.calls).toBeGreaterThanOrEqual(2)
        })
      )
  )
  it.effect(
    "a file rewritten after the data was read (before the second fstat) → FILE_CHANGED_DURING_READ",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          const file = fresh("rewrite-after.txt")
          arm(file, 2, "before", () => fs.writeFileSync(file, "ONE\nTWO\nTHREE\nFOUR\n"))
          yield* expectCode(a.read("wd", "rewrite-after.txt"), "FILE_CHANGED_DURING_READ")
        })
      )
  )
  it.effect("a metadata-only change (chmod) during the read is detected too", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = fresh("chmod-during.txt")
        arm(file, 2, "before", () => fs.chmodSync(file, 0o600))
        yield* expectCode(a.read("wd", "chmod-during.txt"), "FILE_CHANGED_DURING_READ")
      })
    )
  )
  it.effect("the resource shares the check → FILE_CHANGED_DURING_READ", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = fresh("resource-during.txt")
        arm(file, 1, "after", () => fs.appendFileSync(file, "four\n"))
        yield* expectCode(a.resource("wd", "resource-during.txt"), "FILE_CHANGED_DURING_READ")
      })
    )
  )
  it.effect("control: the same interposition without a change returns the page and the stat revision", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const file = fresh("unchanged.txt")
        arm(file, 1, "after", () => undefined)
        const r = yield* a.read("wd", "unchanged.txt")
        expect(hook.calls).toBe(2)
        expect(r.content).toBe("one\ntwo\nthree\n")
        hook.ino = undefined
        expect(r.revision).toBe((yield* a.stat("wd", "unchanged.txt")).revision)
      })
    )
  )
})

describe("search_text refusals never start ripgrep", () => {
  it.effect(
    "DENIED, HIDDEN-free reserved, outside, unknown workdir, missing, file, symlink roots: rg not started",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          yield* expectCode(
            a.search("wd", "needle", "internal"),
            "DENIED_PATH",
            "DENIED_PATH: wd:internal — path is denied by policy"
          )
          yield* expectCode(a.search("wd", "needle", "internal/deeper"), "DENIED_PATH")
          yield* expectCode(a.search("wd", "needle", ".ssh"), "DENIED_PATH")
          yield* expectCode(a.search("wd", "needle", ".serverfs-tmp-x"), "RESERVED_PATH")
          yield* expectCode(a.search("wd", "needle", ".."), "PATH_OUTSIDE_WORKDIR")
          yield* expectCode(a.search("nope", "needle"), "WORKDIR_NOT_FOUND")
          yield* expectCode(a.search("wd", "needle", "missing"), "PATH_NOT_FOUND")
          yield* expectCode(a.search("wd", "needle", "plain.txt"), "NOT_A_DIRECTORY")
          yield* expectCode(a.search("wd", "needle", "link"), "SYMLINK_NOT_ALLOWED")
          expect(rg.starts).toBe(0)
        })
      )
  )
  it.effect("a query with a newline or NUL → INVALID_ARGUMENT (query not echoed), rg not started", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        for (const query of ["needle\nsecond", "a\0b", "\n"]) {
          const e = yield* expectCode(
            a.search("wd", query),
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT: search_text: query — must be a single line without NUL characters"
          )
          expect(e.message).not.toContain("needle")
        }
        expect(rg.starts).toBe(0)
      })
    )
  )
  it.effect("reserved names and VCS dirs are excluded by rg itself (never reported, not only filtered)", () =>
    withChannels({ ...vars, SERVERFS_DISABLE_DEFAULT_DENY: "true" }, (a) =>
      Effect.gen(function* () {
        const r = yield* a.search("wd", "needle", "res")
        expect(r.matches.map((m) => m.path).sort()).toEqual(["res/deep/ok.txt", "res/ok.txt"])
        expect(rg.raw.sort()).toEqual(["deep/ok.txt", "ok.txt"])
        const globbed = yield* a.search("wd", "needle", "res", { glob: "**/.*" })
        expect(globbed.matches).toEqual([])
        expect(rg.raw.sort()).toEqual(["deep/ok.txt", "ok.txt"])
      })
    )
  )
  it.effect("control: an allowed root starts rg exactly once", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const r = yield* a.search("wd", "needle", "", { glob: "plain.txt" })
        expect(r.matches).toEqual([{ path: "plain.txt", line: 1, text: "needle" }])
        expect(rg.starts).toBe(1)
      })
    )
  )
})

describe("EMFILE while confirming search matches", () => {
  it.effect(
    "a match whose file cannot be opened for lack of descriptors → RESOURCE_EXHAUSTED, not silently dropped",
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          fs.writeFileSync(path.join(root, "victim.txt"), "needle\n")
          // rg itself opens the file by path; only the verifier's descriptor open fails.
          hook.emfileFor = "victim.txt"
          yield* expectCode(a.read("wd", "victim.txt"), "RESOURCE_EXHAUSTED")
          yield* expectCode(
            a.search("wd", "needle", "", { glob: "victim.txt" }),
            "RESOURCE_EXHAUSTED",
            "RESOURCE_EXHAUSTED: wd: — the server is out of file descriptors; retry later"
          )
          hook.emfileFor = undefined
          expect((yield* a.search("wd", "needle", "", { glob: "victim.txt" })).matches).toEqual([
            { path: "victim.txt", line: 1, text: "needle" }
          ])
        })
      )
  )
})
