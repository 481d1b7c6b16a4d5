/**
 * THE race test of the read plane (spec v0.2 §4/§6, tool-contracts §5): a separate process
 * atomically exchanges the workdir's real directory `sub` with `swap`, a symlink to a directory
 * outside the workdir that holds the same file names with secret content plus an outside-only
 * file, in a tight loop (renameat2 RENAME_EXCHANGE). Meanwhile thousands of read_text_file,
 * resource, stat_file, list_directory, find_files and search_text calls target paths inside
 * `sub`. No result may ever carry outside content or an outside-only name, and the swap must
 * demonstrably have raced the calls (refusals with SYMLINK_NOT_ALLOWED and successes both
 * observed). The naive path-based read is shown to escape in the same setup, so the test can
 * fail.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Api,
  type ChannelError,
  expectCode,
  type Vars,
  withChannels,
  workdirVars
} from "./fixtures/channels.js"
import { spawnFixture, waitForExit, waitForLine } from "./fixtures/processes.js"
import { buildTree, makeBase, removeBase } from "./fixtures/tree.js"

const ROUNDS = 300
/** Extra time allowed only while evidence that the race really happened is still missing. */
const EXTRA_MS = 8_000
const SWAPPER_MAX_MS = "90000"
const NAIVE_MAX_MS = 10_000
/** Typically ~10 s alone; generous because a loaded 2-core runner slows rg and the swapper. */
const HEAVY_TIMEOUT_MS = 120_000

const NAMES = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]
const OUTSIDE_ONLY = "outside-only-SECRET.txt"
const SECRET = "OUTSIDE-SECRET"

let base = ""
let root = ""
let vars: Vars = {}

beforeAll(async () => {
  base = makeBase("serverfs-ws-race-")
  root = path.join(base, "wd")
  const outside = path.join(base, "outside")
  fs.mkdirSync(root)
  const content = (tag: string, name: string) => `${tag} ${name}\n${tag} line two\n`
  await buildTree(base, {
    outside: {
      dir: {
        ...Object.fromEntries(NAMES.map((n) => [n, content(SECRET, n)])),
        [OUTSIDE_ONLY]: `${SECRET} only\n`,
        nested: { dir: { "deep.txt": content(SECRET, "deep"), [OUTSIDE_ONLY]: `${SECRET} nested only\n` } }
      }
    }
  })
  await buildTree(root, {
    sub: {
      dir: {
        ...Object.fromEntries(NAMES.map((n) => [n, content("INSIDE", n)])),
        nested: { dir: { "deep.txt": content("INSIDE", "deep") } }
      }
    },
    swap: { symlink: outside },
    "top.txt": "INSIDE top\n"
  })
  vars = workdirVars(root, { SERVERFS_SEARCH_TIMEOUT_SECONDS: "30" })
})

afterAll(() => removeBase(base))

interface Tally {
  calls: number
  byChannel: Record<string, number>
  successes: number
  insideReads: number
  refused: Record<string, number>
  refusedBy: Record<string, number>
  searches: number
  searchMatches: number
  leaks: string[]
}

const newTally = (): Tally => ({
  calls: 0,
  byChannel: {},
  successes: 0,
  insideReads: 0,
  refused: {},
  refusedBy: {},
  searches: 0,
  searchMatches: 0,
  leaks: []
})

/** Codes a raced call may answer: the link was seen (or the type changed mid-call). */
const RACE_CODES = new Set(["SYMLINK_NOT_ALLOWED", "NOT_A_DIRECTORY", "PATH_NOT_FOUND"])

const observe = <A>(tally: Tally, channel: string, effect: Effect.Effect<A, ChannelError>) =>
  Effect.map(Effect.either(effect), (result) => {
    tally.calls++
    tally.byChannel[channel] = (tally.byChannel[channel] ?? 0) + 1
    if (result._tag === "Left") {
      const code = result.left._tag
      tally.refused[code] = (tally.refused[code] ?? 0) + 1
      tally.refusedBy[`${channel}:${code}`] = (tally.refusedBy[`${channel}:${code}`] ?? 0) + 1
      if (!RACE_CODES.has(code)) tally.leaks.push(`${channel}: unexpected ${code}`)
      return undefined
    }
    tally.successes++
    const text = JSON.stringify(result.right)
    if (text.includes(SECRET) || text.includes("outside-only"))
      tally.leaks.push(`${channel}: ${text.slice(0, 300)}`)
    return result.right
  })

/** One round: 12 calls over every channel, all aimed inside `sub`. */
const round = (a: Api, t: Tally, i: number) =>
  Effect.gen(function* () {
    const name = NAMES[i % NAMES.length]!
    const read = yield* observe(t, "read", a.read("wd", `sub/${name}`))
    if (read !== undefined) {
      expect(read.content).toBe(`INSIDE ${name}\nINSIDE line two\n`)
      t.insideReads++
    }
    yield* observe(t, "read", a.read("wd", "sub/nested/deep.txt"))
    const only = yield* observe(t, "read", a.read("wd", `sub/${OUTSIDE_ONLY}`))
    if (only !== undefined) t.leaks.push("read of the outside-only file succeeded")
    yield* observe(t, "resource", a.resource("wd", `sub/${name}`))
    yield* observe(t, "stat", a.stat("wd", `sub/${name}`))
    const statOnly = yield* observe(t, "stat", a.stat("wd", `sub/${OUTSIDE_ONLY}`))
    if (statOnly !== undefined) t.leaks.push("stat of the outside-only file succeeded")
    yield* observe(t, "stat", a.stat("wd", "sub/nested"))
    yield* observe(t, "list", a.list("wd", "sub"))
    yield* observe(t, "list", a.list("wd", "sub/nested"))
    yield* observe(t, "find", a.find("wd", "*", "sub"))
    yield* observe(t, "find", a.find("wd", "*.txt", "", { limit: 100 }))
    // One search per round, alternating: inside `sub` (both sides match) and from the root for
    // text that only exists outside (any match at all would be a leak).
    t.searches++
    const searched =
      i % 2 === 0
        ? yield* observe(t, "search", a.search("wd", "line two", "sub", { limit: 100 }))
        : yield* observe(t, "search", a.search("wd", "SECRET", "", { limit: 1 }))
    if (searched !== undefined) {
      t.searchMatches += searched.returned
      if (searched.truncated && searched.returned < (i % 2 === 0 ? 100 : 1)) {
        t.leaks.push(`search: truncated with only ${searched.returned} matches`)
      }
      if (i % 2 === 1 && (searched.returned > 0 || searched.truncated))
        t.leaks.push("search: outside text counted")
    }
  })

const withSwapper = <A, E>(body: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const child = spawnFixture("swapper.mjs", [root, "sub", "swap", SWAPPER_MAX_MS])
      await waitForLine(child, "ready")
      return child
    }),
    () => body,
    (child) =>
      Effect.promise(async () => {
        child.kill("SIGKILL")
        await waitForExit(child)
      })
  )

describe("symlink-swap race against every read channel", () => {
  it.live(
    `no call ever returns outside content or names (≥ ${ROUNDS * 12} calls, ${ROUNDS} searches)`,
    () =>
      withChannels(vars, (a) =>
        Effect.gen(function* () {
          const t = newTally()
          const started = Date.now()
          yield* withSwapper(
            Effect.gen(function* () {
              let i = 0
              for (; i < ROUNDS; i++) yield* round(a, t, i)
              const enough = () => (t.refused.SYMLINK_NOT_ALLOWED ?? 0) > 0 && t.insideReads > 0
              const deadline = Date.now() + EXTRA_MS
              while (!enough() && Date.now() < deadline) yield* round(a, t, i++)
            })
          )
          console.log(`[race] channels: ${JSON.stringify({ ...t, ms: Date.now() - started })}`)
          expect(t.leaks).toEqual([])
          expect(t.calls).toBeGreaterThanOrEqual(ROUNDS * 12)
          expect(t.searches).toBeGreaterThanOrEqual(ROUNDS)
          // The swap really raced the calls: both refusals and inside successes were seen.
          expect(t.refused.SYMLINK_NOT_ALLOWED ?? 0).toBeGreaterThan(0)
          expect(t.insideReads).toBeGreaterThan(0)
        })
      ),
    HEAVY_TIMEOUT_MS
  )

  it.live("the naive path-based read DOES escape in the same setup (so the test above can fail)", () =>
    Effect.gen(function* () {
      const target = path.join(root, "sub", "a.txt")
      const t = { reads: 0, inside: 0, escapes: 0, errors: 0 }
      yield* withSwapper(
        Effect.sync(() => {
          const deadline = Date.now() + NAIVE_MAX_MS
          while (t.escapes === 0 && Date.now() < deadline) {
            for (let i = 0; i < 1000; i++) {
              t.reads++
              try {
                const text = fs.readFileSync(target, "utf8")
                if (text.includes(SECRET)) t.escapes++
                else t.inside++
              } catch {
                t.errors++
              }
            }
          }
        })
      )
      console.log(`[race] naive fs.readFileSync: ${JSON.stringify(t)}`)
      expect(t.escapes).toBeGreaterThan(0)
    })
  )
})

describe("the workdir root is held from startup", () => {
  it.live(
    "replacing the host directory (renamed away, then a symlink to outside in its place) redirects no channel",
    () => {
      const held = makeBase("serverfs-ws-held-")
      const dir = path.join(held, "wd")
      const outside = path.join(held, "outside")
      fs.mkdirSync(dir)
      fs.mkdirSync(outside)
      fs.writeFileSync(path.join(dir, "file.txt"), "ORIGINAL x\n")
      fs.writeFileSync(path.join(outside, "file.txt"), `${SECRET} x\n`)
      fs.writeFileSync(path.join(outside, "only-outside.txt"), `${SECRET} x\n`)
      return withChannels(workdirVars(dir), (a) =>
        Effect.gen(function* () {
          fs.renameSync(dir, path.join(held, "moved"))
          fs.symlinkSync(outside, dir)
          expect((yield* a.read("wd", "file.txt")).content).toBe("ORIGINAL x\n")
          expect((yield* a.resource("wd", "file.txt")).text).toBe("ORIGINAL x\n")
          expect((yield* a.list("wd")).entries.map((e) => e.name)).toEqual(["file.txt"])
          expect((yield* a.find("wd", "*")).matches).toEqual([{ path: "file.txt" }])
          expect((yield* a.search("wd", "x")).matches).toEqual([
            { path: "file.txt", line: 1, text: "ORIGINAL x" }
          ])
          yield* expectCode(a.stat("wd", "only-outside.txt"), "PATH_NOT_FOUND")
        })
      ).pipe(Effect.ensuring(Effect.sync(() => removeBase(held))))
    }
  )
})
