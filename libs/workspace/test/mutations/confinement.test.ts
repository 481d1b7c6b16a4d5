/**
 * THE path-confinement race of the write plane (spec v0.2 §6: every mutation walks the parent
 * chain with O_DIRECTORY|O_NOFOLLOW, holds the parent fd and acts on the final name only
 * relative to it). A separate process atomically exchanges the workdir's real directory `sub`
 * with `swap`, a symlink to a directory outside the workdir holding the same names, in a tight
 * renameat2(RENAME_EXCHANGE) loop. Meanwhile thousands of create_text_file, edit_text_file,
 * delete_file, create_directory and delete_directory calls target paths inside `sub`.
 *
 * Afterwards the outside directory must be byte-for-byte and inode-for-inode what it was
 * (names, types, modes, owners, sizes, contents, inodes, mtimes, ctimes — its own included),
 * every successful create must have landed in the real inside directory, no temp may be left
 * anywhere, and the swap must demonstrably have raced the calls (SYMLINK_NOT_ALLOWED seen).
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { AT, close, fstatat, O, openat } from "@serverfs/posix"
import { Effect } from "effect"
import { revisionOf } from "../../src/index.js"
import {
  type AnyError,
  leftovers,
  makeBase,
  removeBase,
  rwVars,
  snapshot,
  withServer
} from "./fixtures/harness.js"
import { collectLines, spawnFixture, waitForExit, waitForLine } from "./fixtures/processes.js"

const MIN_CALLS = 2000
const MAX_CALLS = 20_000
const KEEP = 8

let base = ""
let root = ""
let outside = ""

beforeAll(() => {
  base = makeBase("serverfs-mut-confine-")
  root = path.join(base, "wd")
  outside = path.join(base, "outside")
  for (const dir of [root, path.join(root, "sub"), outside]) fs.mkdirSync(dir)
  for (let j = 0; j < KEEP; j++) {
    fs.writeFileSync(path.join(root, "sub", `e-${j}.txt`), `INSIDE e-${j}\n`)
    fs.mkdirSync(path.join(root, "sub", `k-${j}`))
    fs.writeFileSync(path.join(outside, `e-${j}.txt`), `OUTSIDE SECRET e-${j}\n`)
    fs.mkdirSync(path.join(outside, `k-${j}`))
  }
  fs.mkdirSync(path.join(outside, "nested"))
  fs.writeFileSync(path.join(outside, "nested", "deep.txt"), "OUTSIDE nested\n")
  fs.symlinkSync(outside, path.join(root, "swap"))
})

afterAll(() => removeBase(base))

interface Tally {
  calls: number
  byTool: Record<string, Record<string, number>>
  misplaced: string[]
}

describe("confinement under a racing directory swap", () => {
  it.live(`≥ ${MIN_CALLS} mutations inside a swapped directory never touch the outside`, () =>
    Effect.gen(function* () {
      const outsideBefore = snapshot(outside)
      // The real inside directory, whatever its name at any moment.
      const inside = openat(AT.FDCWD, path.join(root, "sub"), O.RDONLY | O.DIRECTORY)
      const insideRevision = (name: string) => revisionOf(fstatat(inside, name, AT.SYMLINK_NOFOLLOW))
      const isInside = (name: string) => {
        try {
          fstatat(inside, name, AT.SYMLINK_NOFOLLOW)
          return true
        } catch {
          return false
        }
      }
      // The held directory through procfs: the real inside directory whatever `sub` is right now.
      const insidePath = (name: string) => `/proc/self/fd/${inside}/${name}`
      /** Put back a pre-existing entry whose re-creation was refused by the race. */
      const ensureInside = (j: number) => {
        if (!fs.existsSync(insidePath(`e-${j}.txt`)))
          fs.writeFileSync(insidePath(`e-${j}.txt`), `INSIDE e-${j}\n`)
        if (!fs.existsSync(insidePath(`k-${j}`))) fs.mkdirSync(insidePath(`k-${j}`))
      }
      const swapper = spawnFixture("swapper.mjs", [root, "sub", "swap", "120000"])
      const swapperLines = collectLines(swapper)
      yield* Effect.promise(() => waitForLine(swapper, (l) => l === "ready"))

      const tally: Tally = { calls: 0, byTool: {}, misplaced: [] }
      const run = <A>(tool: string, call: Effect.Effect<A, AnyError>) =>
        Effect.map(Effect.either(call), (either) => {
          tally.calls++
          const code = either._tag === "Right" ? "OK" : either.left._tag
          const forTool = tally.byTool[tool] ?? {}
          tally.byTool[tool] = forTool
          forTool[code] = (forTool[code] ?? 0) + 1
          return either._tag === "Right" ? either.right : undefined
        })
      const refused = () =>
        Object.values(tally.byTool).reduce((sum, codes) => sum + (codes.SYMLINK_NOT_ALLOWED ?? 0), 0)
      const succeeded = () => Object.values(tally.byTool).reduce((sum, codes) => sum + (codes.OK ?? 0), 0)

      yield* withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          for (let i = 0; tally.calls < MIN_CALLS || refused() === 0 || succeeded() === 0; i++) {
            if (tally.calls >= MAX_CALLS || tally.misplaced.length > 0) break
            // A fresh file: create → edit → delete, each with the revision just returned.
            const name = `c-${i}.txt`
            const made = yield* run("create_text_file", h.create(`sub/${name}`, `created ${i}\n`))
            if (made !== undefined) {
              if (!isInside(name)) tally.misplaced.push(name)
              const edited = yield* run(
                "edit_text_file",
                h.edit(`sub/${name}`, made.revision, [{ old_text: "created", new_text: "edited" }])
              )
              yield* run("delete_file", h.del(`sub/${name}`, (edited ?? made).revision))
            }
            // A fresh directory: create → delete.
            const dir = yield* run("create_directory", h.mkdir(`sub/m-${i}`))
            if (dir !== undefined) {
              if (!isInside(`m-${i}`)) tally.misplaced.push(`m-${i}`)
              yield* run("delete_directory", h.rmdir(`sub/m-${i}`, dir.revision))
            }
            // Pre-existing names that also exist outside, with their real inside revisions.
            const j = i % KEEP
            ensureInside(j)
            yield* run(
              "edit_text_file",
              h.edit(`sub/e-${j}.txt`, insideRevision(`e-${j}.txt`), [
                { old_text: "INSIDE", new_text: "INSIDE" }
              ])
            )
            const removed = yield* run("delete_directory", h.rmdir(`sub/k-${j}`, insideRevision(`k-${j}`)))
            if (removed !== undefined) yield* run("create_directory", h.mkdir(`sub/k-${j}`))
            // Deleting a pre-existing file inside, then putting it back.
            const gone = yield* run("delete_file", h.del(`sub/e-${j}.txt`, insideRevision(`e-${j}.txt`)))
            if (gone !== undefined)
              yield* run("create_text_file", h.create(`sub/e-${j}.txt`, `INSIDE e-${j}\n`))
          }
        })
      )

      swapper.kill("SIGTERM")
      yield* Effect.promise(() => waitForExit(swapper))
      const swaps = swapperLines().find((l) => l.startsWith("swaps "))
      console.info(
        `confinement race: ${tally.calls} calls, ${succeeded()} succeeded, ${refused()} SYMLINK_NOT_ALLOWED, ${swaps ?? "swaps ?"}; by tool ${JSON.stringify(tally.byTool)}`
      )

      for (let j = 0; j < KEEP; j++) ensureInside(j)
      const insideNames = fs.readdirSync(`/proc/self/fd/${inside}`)
      close(inside)
      expect(tally.misplaced).toEqual([])
      // The outside directory is exactly as it was: names, types, bytes, inodes, times.
      expect(snapshot(outside)).toEqual(outsideBefore)
      expect(leftovers(outside)).toEqual([])
      expect(leftovers(root)).toEqual([])
      expect(tally.calls).toBeGreaterThanOrEqual(MIN_CALLS)
      // The swap really raced the calls, and calls really went through between swaps.
      expect(refused()).toBeGreaterThan(0)
      expect(succeeded()).toBeGreaterThan(0)
      // The only refusal the race causes is the symlink refusal. NOT_A_DIRECTORY is the same
      // refusal misnamed: the descriptor walk (DescriptorWalk.ts, read plane) re-stats a name
      // whose O_NOFOLLOW open failed to classify it, and by then the swap has put the real
      // directory back. Reported as a finding; harmless for confinement, so tolerated here.
      const codes = new Set(Object.values(tally.byTool).flatMap((c) => Object.keys(c)))
      for (const code of codes) expect(["OK", "SYMLINK_NOT_ALLOWED", "NOT_A_DIRECTORY"]).toContain(code)
      // Inside holds the pre-existing names and whatever fresh entries a refused delete left.
      for (const name of insideNames) expect(name).toMatch(/^(e-\d+\.txt|k-\d+|c-\d+\.txt|m-\d+)$/)
    })
  )
})
