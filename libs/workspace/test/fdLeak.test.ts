/**
 * No descriptor leak: thousands of mixed calls on every channel, successes and every kind of
 * failure, searches and finds stopped early at their limit, searches killed at their deadline
 * and calls interrupted mid-flight, leave /proc/self/fd exactly as it was.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { type Api, type ChannelError, withChannels, workdirVars } from "./fixtures/channels.js"
import { buildTree, makeBase, removeBase } from "./fixtures/tree.js"

let base = ""
let root = ""

const openFds = (): number => fs.readdirSync("/proc/self/fd").length

beforeAll(async () => {
  base = makeBase("serverfs-ws-fds-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  let deep = {}
  for (let i = 0; i < 20; i++) deep = { [`d${i}`]: { dir: { ...deep, [`f${i}.txt`]: "NEEDLE deep\n" } } }
  await buildTree(root, {
    "ok.txt": "NEEDLE ok\nline 2\n",
    "binary.bin": "a\0b\n",
    "long.txt": `${"x".repeat(200)}\n`,
    "bad.txt": Buffer.from([0x6f, 0x6b, 0x0a, 0xff, 0x0a]),
    "many-lines.txt": "NEEDLE\n".repeat(300),
    dir: { dir: { "inner.txt": "NEEDLE inner\n" } },
    link: { symlink: "ok.txt" },
    "dir-link": { symlink: "dir" },
    fifo: { fifo: true },
    many: { dir: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`m${i}.txt`, "NEEDLE many\n"])) },
    deep: { dir: deep },
    // Denied by a path glob: ripgrep still reads it (only name globs become rg excludes), so a
    // search of it runs into its deadline.
    flood: { dir: { "flood.txt": "FLOOD\n".repeat(200_000) } },
    "keys.pem": "secret\n"
  })
})

afterAll(() => removeBase(base))

/** Succeeds with the outcome tag, whether the call succeeded or failed. */
const settle = (effect: Effect.Effect<unknown, ChannelError>) =>
  Effect.map(Effect.either(effect), (r) => (r._tag === "Left" ? r.left._tag : "ok"))

const round = (a: Api, i: number) =>
  Effect.all([
    settle(a.read("wd", "ok.txt")),
    settle(a.read("wd", "ok.txt", { startLine: 2, maxLines: 1 })),
    settle(a.read("wd", "missing.txt")),
    settle(a.read("wd", "dir")),
    settle(a.read("wd", "fifo")),
    settle(a.read("wd", "link")),
    settle(a.read("wd", "dir-link/inner.txt")),
    settle(a.read("wd", "binary.bin")),
    settle(a.read("wd", "long.txt")),
    settle(a.read("wd", "bad.txt")),
    settle(a.read("wd", "keys.pem")),
    settle(a.read("wd", "ok.txt/x")),
    settle(a.resource("wd", "ok.txt")),
    settle(a.resource("wd", "many-lines.txt")),
    settle(a.stat("wd", i % 2 === 0 ? "" : "dir/inner.txt")),
    settle(a.stat("wd", "dir-link/x")),
    settle(a.list("wd", "dir")),
    settle(a.list("wd", "ok.txt")),
    settle(a.list("wd", "missing")),
    settle(a.find("wd", "*.txt", "many", { limit: 1 })),
    settle(a.find("wd", "*.txt", "deep", { limit: 100 })),
    settle(a.find("wd", "*", "dir-link"))
  ])

const searchRound = (a: Api) =>
  Effect.all([
    settle(a.search("wd", "NEEDLE", "many", { limit: 1 })),
    settle(a.search("wd", "NEEDLE", "", { limit: 100 })),
    settle(a.search("wd", "NEEDLE", "keys.pem")),
    settle(a.search("wd", "NEEDLE", "", { glob: "[" })),
    settle(a.search("wd", "NEEDLE", "ok.txt")),
    settle(a.search("wd", "x\ny"))
  ])

describe("no descriptor leak", () => {
  it.live(
    "≥ 2000 mixed calls (all channels, failures, early stops, timeouts, interruptions) leave /proc/self/fd unchanged",
    () =>
      withChannels(
        workdirVars(root, {
          SERVERFS_EXTRA_DENY_GLOBS: "*.deny,flood/flood.txt",
          WORKDIR_01_MAX_READ_BYTES: "100",
          WORKDIR_01_MAX_READ_LINES: "200"
        }),
        (a) =>
          withChannels(
            workdirVars(root, {
              SERVERFS_EXTRA_DENY_GLOBS: "*.deny,flood/flood.txt",
              SERVERFS_SEARCH_TIMEOUT_SECONDS: "0.05"
            }),
            (slow) =>
              Effect.gen(function* () {
                // Warm-up: every lazily opened resource (modules, the rg binary's first spawn) exists.
                yield* round(a, 0)
                yield* searchRound(a)
                const before = openFds()
                const outcomes: Record<string, number> = {}
                let calls = 0
                const count = (tags: ReadonlyArray<string>) => {
                  calls += tags.length
                  for (const t of tags) outcomes[t] = (outcomes[t] ?? 0) + 1
                }
                for (let i = 0; i < 100; i++) {
                  count(yield* round(a, i))
                  if (i % 4 === 0) count(yield* searchRound(a))
                }
                // Searches killed at their 0.05 s deadline.
                for (let i = 0; i < 3; i++) count([yield* settle(slow.search("wd", "FLOOD", "flood"))])
                // Calls interrupted mid-flight: a running search and a running find.
                for (let i = 0; i < 3; i++) {
                  const search = yield* Effect.fork(a.search("wd", "FLOOD", "flood"))
                  yield* Effect.sleep("30 millis")
                  yield* Fiber.interrupt(search)
                  const find = yield* Effect.fork(a.find("wd", "*", "", { limit: 100 }))
                  yield* Fiber.interrupt(find)
                  calls += 2
                }
                // Killed children are reaped asynchronously: wait (bounded) for their pipes to close.
                let after = openFds()
                for (let waited = 0; after !== before && waited < 50; waited++) {
                  yield* Effect.sleep("100 millis")
                  after = openFds()
                }
                console.log(
                  `[fds] ${calls} calls, outcomes ${JSON.stringify(outcomes)}, fds ${before} → ${after}`
                )
                expect(calls).toBeGreaterThanOrEqual(2000)
                for (const code of [
                  "ok",
                  "PATH_NOT_FOUND",
                  "NOT_A_FILE",
                  "UNSUPPORTED_FILE_TYPE",
                  "SYMLINK_NOT_ALLOWED",
                  "BINARY_FILE",
                  "LINE_TOO_LARGE",
                  "UNSUPPORTED_TEXT_ENCODING",
                  "DENIED_PATH",
                  "NOT_A_DIRECTORY",
                  "RESOURCE_TOO_LARGE",
                  "SEARCH_FAILED",
                  "SEARCH_TIMEOUT",
                  "INVALID_ARGUMENT"
                ]) {
                  expect(outcomes[code], code).toBeGreaterThan(0)
                }
                expect(after).toBe(before)
              })
          )
      ),
    // Typically ~5 s alone; generous because a loaded 2-core runner slows the rg spawns.
    120_000
  )
})
