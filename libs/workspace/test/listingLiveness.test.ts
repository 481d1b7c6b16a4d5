/**
 * issue 14, item 11: listing a 200,000-entry directory held every other call for about a second
 * (twenty at once: twenty seconds). The directory is now read on the thread pool and filtered
 * and sorted in slices; find_files' walk yields every few thousand entries. Another call is
 * answered while the big listing runs.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { type Vars, withChannels, workdirVars } from "./fixtures/channels.js"
import { makeBase, removeBase } from "./fixtures/tree.js"

const ENTRIES = 200_000

let base = ""
let vars: Vars = {}

beforeAll(() => {
  base = makeBase("serverfs-ws-biglist-")
  const root = path.join(base, "wd")
  fs.mkdirSync(path.join(root, "big"), { recursive: true })
  for (let i = 0; i < ENTRIES; i++) fs.closeSync(fs.openSync(path.join(root, "big", `f${i}`), "w"))
  fs.writeFileSync(path.join(root, "small.txt"), "hello\n")
  vars = workdirVars(root, { SERVERFS_MAX_WALK_ENTRIES: String(ENTRIES + 10) })
}, 120_000)

afterAll(() => removeBase(base))

describe("big directories do not hold the event loop", () => {
  it.live("list_directory of 200,000 entries: a concurrent read is answered before it ends", () =>
    withChannels(vars, (a, rc) =>
      Effect.gen(function* () {
        const listing = yield* Effect.fork(a.list("wd", "big", { offset: 199_990, limit: 100 }))
        const page = yield* a.read("wd", "small.txt")
        expect(page.content).toBe("hello\n")
        const workdirs = yield* rc.listWorkdirs()
        expect(workdirs.workdirs.length).toBe(1)
        expect(Option.isNone(yield* Fiber.poll(listing))).toBe(true)
        const result = yield* Fiber.join(listing)
        // Code-point order: f0, f1, f10, f100, … — the last ten names of that order.
        const names = Array.from({ length: ENTRIES }, (_, i) => `f${i}`).sort()
        expect(result.entries.map((e) => e.name)).toEqual(names.slice(199_990))
        expect(result.has_more).toBe(false)
      })
    )
  )

  it.live("find_files over 200,000 entries: a concurrent read is answered before it ends", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const walk = yield* Effect.fork(a.find("wd", "f19999?", "big", { limit: 50 }))
        const page = yield* a.read("wd", "small.txt")
        expect(page.content).toBe("hello\n")
        expect(Option.isNone(yield* Fiber.poll(walk))).toBe(true)
        const result = yield* Fiber.join(walk)
        expect(result.matches.map((m) => m.path)).toEqual(
          Array.from({ length: 10 }, (_, i) => `big/f19999${i}`)
        )
        expect(result.truncated).toBe(false)
      })
    )
  )
})
