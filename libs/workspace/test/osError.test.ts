/**
 * OS errors → frozen codes (tool-contracts §0 "Mapping of OS errors (read tools)"), as a table
 * and end to end for the one errno a fixture cannot produce by itself: EMFILE. The process's own
 * descriptor table is filled (soft RLIMIT_NOFILE lowered with prlimit, the remaining slots taken
 * by dummy descriptors), every channel is called, then the slots are freed and the limit restored.
 */
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { renderError } from "@serverfs/domain"
import { Cause, Effect, Exit, Option } from "effect"
import { toWalkError } from "../src/index.js"
import { type ChannelError, withChannels, workdirVars } from "./fixtures/channels.js"
import { buildTree, makeBase, removeBase } from "./fixtures/tree.js"

const posixError = (code: string, errno: number): Error =>
  Object.assign(new Error(`${code}: x, openat`), { code, errno, syscall: "openat" })

describe("errno → code table", () => {
  const at = { workdir: "wd", path: "p" }
  const cases: ReadonlyArray<readonly [string, number, string]> = [
    ["ENOENT", -2, "PATH_NOT_FOUND: wd:p — no such file or directory"],
    ["EISDIR", -21, "NOT_A_FILE: wd:p — is a directory"],
    ["ENOTDIR", -20, "NOT_A_DIRECTORY: wd:p — not a directory"],
    ["ELOOP", -40, "SYMLINK_NOT_ALLOWED: wd:p — symbolic links are not followed"],
    ["ENXIO", -6, "UNSUPPORTED_FILE_TYPE: wd:p — not a regular file (FIFO, socket or device)"],
    ["EMFILE", -24, "RESOURCE_EXHAUSTED: wd:p — the server is out of file descriptors; retry later"],
    ["ENFILE", -23, "RESOURCE_EXHAUSTED: wd:p — the server is out of file descriptors; retry later"],
    ["EACCES", -13, "ACCESS_DENIED: wd:p — access denied (permission denied)"],
    ["EPERM", -1, "ACCESS_DENIED: wd:p — access denied (operation not permitted)"],
    ["ENAMETOOLONG", -36, "ACCESS_DENIED: wd:p — access denied (name too long)"],
    ["EIO", -5, "ACCESS_DENIED: wd:p — access denied (i/o error)"]
  ]
  for (const [code, errno, text] of cases) {
    it(`${code} → ${text.slice(0, text.indexOf(":"))}`, () => {
      expect(renderError(toWalkError(posixError(code, errno), at))).toBe(text)
    })
  }
  it("a non-POSIX error → ACCESS_DENIED with a generic reason (never the error's own text)", () => {
    const e = toWalkError(new Error("/secret/host/path exploded"), at)
    expect(renderError(e)).toBe("ACCESS_DENIED: wd:p — access denied (unexpected error)")
  })
})

// ---- EMFILE end to end ----------------------------------------------------------------------

const hasPrlimit = (() => {
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
if (!hasPrlimit) console.log("[os errors] prlimit is not installed: the EMFILE end-to-end test is skipped")

let base = ""
let root = ""

beforeAll(async () => {
  base = makeBase("serverfs-ws-emfile-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  await buildTree(root, { "ok.txt": "NEEDLE\n", dir: { dir: { sub: { dir: { "x.txt": "NEEDLE\n" } } } } })
})

afterAll(() => removeBase(base))

const softLimit = (): string => {
  const line = fs
    .readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"))
  const value = line?.split(/\s{2,}/)[1]
  if (value === undefined) throw new Error("cannot read the open-files limit")
  return value
}

const setSoftLimit = (limit: string): void => {
  execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${limit}:`], { stdio: "ignore" })
}

/**
 * Run `body` with every descriptor slot but `free` taken; slots and limit are restored
 * afterwards.
 */
const withFullFdTable = <A, E>(body: Effect.Effect<A, E>, free = 0): Effect.Effect<A, E> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = softLimit()
      const highest = Math.max(...fs.readdirSync("/proc/self/fd").map(Number))
      setSoftLimit(String(highest + 64))
      const dummies: number[] = []
      for (;;) {
        try {
          dummies.push(fs.openSync("/dev/null", "r"))
        } catch {
          break
        }
      }
      for (let i = 0; i < free; i++) fs.closeSync(dummies.pop()!)
      return { original, dummies }
    }),
    () => body,
    ({ original, dummies }) =>
      Effect.sync(() => {
        for (const fd of dummies) fs.closeSync(fd)
        setSoftLimit(original)
      })
  )

describe.skipIf(!hasPrlimit)("EMFILE end to end", () => {
  it.live(
    "with no descriptor left, every channel answers RESOURCE_EXHAUSTED (never a crash or a wrong code)",
    () =>
      withChannels(workdirVars(root), (a) =>
        Effect.gen(function* () {
          const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, ChannelError>]> = [
            ["read", a.read("wd", "ok.txt")],
            ["read deep", a.read("wd", "dir/sub/x.txt")],
            ["resource", a.resource("wd", "ok.txt")],
            ["stat", a.stat("wd", "dir/sub/x.txt")],
            ["list", a.list("wd", "dir")],
            ["list root", a.list("wd", "")],
            ["find", a.find("wd", "*", "dir")],
            ["find root", a.find("wd", "*")],
            ["search", a.search("wd", "NEEDLE", "dir")]
          ]
          const outcomes = yield* withFullFdTable(
            Effect.forEach(calls, ([name, call]) =>
              Effect.map(
                Effect.either(call),
                (r) => [name, r._tag === "Left" ? renderError(r.left) : "ok"] as const
              )
            )
          )
          for (const [name, outcome] of outcomes) {
            expect(outcome, name).toMatch(
              /^RESOURCE_EXHAUSTED: wd:[^ ]* — the server is out of file descriptors; retry later$/
            )
          }
          // And once descriptors are free again, the same calls work.
          expect((yield* a.read("wd", "ok.txt")).content).toBe("NEEDLE\n")
          expect((yield* a.search("wd", "NEEDLE", "dir")).returned).toBe(1)
        })
      )
  )
  it.live(
    "with only a few descriptors free, every channel works or answers RESOURCE_EXHAUSTED (no defect, no crash)",
    () =>
      withChannels(workdirVars(root), (a) =>
        Effect.gen(function* () {
          const seen = new Set<string>()
          for (let free = 0; free <= 12; free++) {
            const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, ChannelError>]> = [
              ["read", a.read("wd", "dir/sub/x.txt")],
              ["list", a.list("wd", "dir/sub")],
              ["find", a.find("wd", "*")],
              ["stat", a.stat("wd", "dir/sub/x.txt")],
              // rg needs descriptors for its pipes: a spawn that fails with EMFILE must not escape
              // as a TypeError or as an unlistened "error" event (which would kill the process).
              ["search", a.search("wd", "NEEDLE", "dir")]
            ]
            const outcomes = yield* withFullFdTable(
              Effect.forEach(calls, ([name, call]) =>
                Effect.map(Effect.exit(call), (exit) => {
                  if (Exit.isSuccess(exit)) return [name, "ok"] as const
                  const failure = Cause.failureOption(exit.cause)
                  return [
                    name,
                    Option.isSome(failure) ? failure.value._tag : `defect: ${Cause.pretty(exit.cause)}`
                  ] as const
                })
              ),
              free
            )
            for (const [name, outcome] of outcomes) {
              seen.add(`${name}:${outcome}`)
              expect(["ok", "RESOURCE_EXHAUSTED"], `${name} with ${free} free descriptors`).toContain(outcome)
            }
          }
          console.log(`[os errors] outcomes over 0..12 free descriptors: ${[...seen].sort().join(" ")}`)
          expect(seen).toContain("search:RESOURCE_EXHAUSTED")
          expect(seen).toContain("search:ok")
        })
      )
  )
})
