/**
 * Mutation concurrency (spec v0.2 §5, tool-contracts §2.7, §6): one process-wide lock, the
 * revision re-checked inside it, atomic publication. Two callers holding one revision cannot
 * both commit; two creates of one path cannot both succeed; a reader — a read_text_file loop
 * in-process, and a worker thread reading the file with plain read(2) truly in parallel — only
 * ever sees one complete content or the other.
 */
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { Worker } from "node:worker_threads"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import {
  type AnyError,
  leftovers,
  makeBase,
  outcomeOf,
  removeBase,
  revisionAt,
  rwVars,
  withServer
} from "./fixtures/harness.js"

const N = 24

let base = ""
let root = ""

beforeAll(() => {
  base = makeBase("serverfs-mut-conc-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
})

afterAll(() => removeBase(base))

const vars = () => rwVars(root)

const tally = (outcomes: ReadonlyArray<string>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const o of outcomes) out[o] = (out[o] ?? 0) + 1
  return out
}

/**
 * Run effects concurrently with the scheduler switching fibers every 16 operations, so
 * the calls really interleave at every step (left alone, a synchronous mutation would run to
 * its end before the next fiber starts, and the process-wide lock would never be exercised).
 */
const interleaved = <A, E>(effects: ReadonlyArray<Effect.Effect<A, E>>) =>
  Effect.all(effects, { concurrency: "unbounded" }).pipe(Effect.withMaxOpsBeforeYield(16))

/** Run all calls interleaved; the outcome of each, in order. */
const race = <A>(calls: ReadonlyArray<Effect.Effect<A, AnyError>>) =>
  interleaved(calls.map((call) => outcomeOf(call)))

describe("two callers holding one revision cannot both commit", () => {
  it.effect(`${N} parallel edits on one revision: exactly one wins, the file is exactly the winner's`, () =>
    withServer(vars(), (h) =>
      Effect.gen(function* () {
        fs.writeFileSync(path.join(root, "shared.txt"), "BASE line\nkeep\n")
        const revision = revisionAt(path.join(root, "shared.txt"))
        const texts = Array.from({ length: N }, (_, i) => `winner-${i}-${"x".repeat(i)}`)
        const results = yield* interleaved(
          texts.map((text) =>
            Effect.either(h.edit("shared.txt", revision, [{ old_text: "BASE", new_text: text }]))
          )
        )
        const winners = results.flatMap((r, i) => (r._tag === "Right" ? [{ i, result: r.right }] : []))
        const losers = results.flatMap((r) => (r._tag === "Left" ? [r.left._tag] : []))
        expect(winners).toHaveLength(1)
        expect(tally(losers)).toEqual({ REVISION_CONFLICT: N - 1 })
        const winner = winners[0]!
        expect(fs.readFileSync(path.join(root, "shared.txt"), "utf8")).toBe(`${texts[winner.i]} line\nkeep\n`)
        expect(winner.result.revision).toBe(revisionAt(path.join(root, "shared.txt")))
        expect(leftovers(root)).toEqual([])
      })
    )
  )

  it.effect(`${N} parallel creates of one path: exactly one succeeds, the rest PATH_ALREADY_EXISTS`, () =>
    withServer(vars(), (h) =>
      Effect.gen(function* () {
        const contents = Array.from({ length: N }, (_, i) => `created by caller ${i}\n${"y".repeat(i * 10)}`)
        const results = yield* interleaved(
          contents.map((content) => Effect.either(h.create("once.txt", content)))
        )
        const winners = results.flatMap((r, i) => (r._tag === "Right" ? [i] : []))
        expect(winners).toHaveLength(1)
        expect(tally(results.flatMap((r) => (r._tag === "Left" ? [r.left._tag] : [])))).toEqual({
          PATH_ALREADY_EXISTS: N - 1
        })
        expect(fs.readFileSync(path.join(root, "once.txt"), "utf8")).toBe(contents[winners[0]!])
        // And the same for directories.
        const dirs = yield* race(Array.from({ length: N }, () => h.mkdir("once-dir")))
        expect(tally(dirs)).toEqual({ OK: 1, PATH_ALREADY_EXISTS: N - 1 })
        expect(leftovers(root)).toEqual([])
      })
    )
  )

  it.effect(`${N} parallel deletes (file and directory) on one revision: exactly one commits`, () =>
    withServer(vars(), (h) =>
      Effect.gen(function* () {
        const made = yield* h.create("doomed.txt", "bye\n")
        const files = yield* race(Array.from({ length: N }, () => h.del("doomed.txt", made.revision)))
        expect(files.filter((o) => o === "OK")).toHaveLength(1)
        expect(files.every((o) => o === "OK" || o === "PATH_NOT_FOUND" || o === "REVISION_CONFLICT")).toBe(
          true
        )
        const dir = yield* h.mkdir("doomed-dir")
        const dirs = yield* race(Array.from({ length: N }, () => h.rmdir("doomed-dir", dir.revision)))
        expect(dirs.filter((o) => o === "OK")).toHaveLength(1)
        expect(dirs.every((o) => o === "OK" || o === "PATH_NOT_FOUND" || o === "REVISION_CONFLICT")).toBe(
          true
        )
        expect(fs.existsSync(path.join(root, "doomed.txt"))).toBe(false)
        expect(fs.existsSync(path.join(root, "doomed-dir"))).toBe(false)
      })
    )
  )

  it.effect("edit vs delete on one revision, both orders, 20 rounds: exactly one wins each time", () =>
    withServer(vars(), (h) =>
      Effect.gen(function* () {
        const wins: Record<string, number> = {}
        for (let round = 0; round < 20; round++) {
          const name = `duel-${round}.txt`
          const made = yield* h.create(name, "original text\n")
          const edit = h.edit(name, made.revision, [{ old_text: "original", new_text: "edited" }])
          const del = h.del(name, made.revision)
          const [first, second] = round % 2 === 0 ? [edit, del] : [del, edit]
          const outcomes = yield* race<unknown>([first, second])
          const [editOutcome, deleteOutcome] = round % 2 === 0 ? outcomes : [outcomes[1], outcomes[0]]
          const absolute = path.join(root, name)
          if (editOutcome === "OK") {
            expect(deleteOutcome).toBe("REVISION_CONFLICT")
            expect(fs.readFileSync(absolute, "utf8")).toBe("edited text\n")
            wins.edit = (wins.edit ?? 0) + 1
          } else {
            expect(deleteOutcome).toBe("OK")
            expect(["PATH_NOT_FOUND", "REVISION_CONFLICT"]).toContain(editOutcome)
            expect(fs.existsSync(absolute)).toBe(false)
            wins.delete = (wins.delete ?? 0) + 1
          }
        }
        console.info(`edit vs delete winners: ${JSON.stringify(wins)}`)
        expect(leftovers(root)).toEqual([])
      })
    )
  )
})

/** A worker thread that reads `file` with plain readFileSync until told to stop. */
const RAW_READER = `
const { workerData, parentPort } = require("node:worker_threads")
const fs = require("node:fs")
const { createHash } = require("node:crypto")
const flags = new Int32Array(workerData.flags)
const seen = new Map()
let errors = 0
while (Atomics.load(flags, 0) === 0) {
  let key
  try {
    key = createHash("sha256").update(fs.readFileSync(workerData.file)).digest("hex")
  } catch (error) {
    key = "error:" + error.code
    errors++
  }
  seen.set(key, (seen.get(key) || 0) + 1)
  if (key === workerData.a) Atomics.add(flags, 1, 1)
  else if (key === workerData.b) Atomics.add(flags, 2, 1)
  else Atomics.add(flags, 3, 1)
}
parentPort.postMessage(Object.fromEntries(seen))
`

const sha = (text: string) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex")

describe("readers never see a partial file", () => {
  it.live("read_text_file loops and a parallel raw reader see only one complete content or the other", () =>
    withServer(vars(), (h) =>
      Effect.gen(function* () {
        const A = "short content\nA\n"
        const B = Array.from(
          { length: 400 },
          (_, i) => `line ${i} of the long content ${"b".repeat(80)}\n`
        ).join("")
        const file = path.join(root, "flip.txt")
        fs.writeFileSync(file, A)

        const flags = new SharedArrayBuffer(16)
        const counters = new Int32Array(flags)
        const worker = new Worker(RAW_READER, {
          eval: true,
          workerData: { file, flags, a: sha(A), b: sha(B) }
        })
        const rawSeen = new Promise<Record<string, number>>((resolve, reject) => {
          worker.once("message", resolve)
          worker.once("error", reject)
        })

        const done = yield* Ref.make(false)
        const seen = yield* Ref.make<Record<string, number>>({})
        const note = (key: string) => Ref.update(seen, (s) => ({ ...s, [key]: (s[key] ?? 0) + 1 }))
        const reader = Effect.gen(function* () {
          while (!(yield* Ref.get(done))) {
            const result = yield* Effect.either(h.read("flip.txt"))
            if (result._tag === "Left") {
              yield* note(result.left._tag)
            } else {
              const { content, has_more } = result.right
              yield* note(content === A && !has_more ? "A" : content === B && !has_more ? "B" : "PARTIAL")
            }
            yield* Effect.yieldNow()
          }
        })
        let edits = 0
        const editor = Effect.gen(function* () {
          let current = A
          // At least 40 edits, and on until the parallel reader has seen both contents a few
          // times (bounded): evidence that the reads really overlapped the replacements.
          while (
            edits < 40 ||
            ((Atomics.load(counters, 1) < 3 || Atomics.load(counters, 2) < 3) && edits < 2000)
          ) {
            const next = current === A ? B : A
            const revision = (yield* h.stat("flip.txt")).revision
            yield* h.edit("flip.txt", revision, [{ old_text: current, new_text: next }])
            current = next
            edits++
            yield* Effect.yieldNow()
          }
          yield* Ref.set(done, true)
        })
        yield* interleaved([editor, reader, reader, reader])
        Atomics.store(counters, 0, 1)
        const raw = yield* Effect.promise(() => rawSeen)
        yield* Effect.promise(() => worker.terminate())

        const inProcess = yield* Ref.get(seen)
        console.info(
          `edits ${edits}; read_text_file saw ${JSON.stringify(inProcess)}; raw reads ${JSON.stringify(
            Object.fromEntries(
              Object.entries(raw).map(([k, v]) => [k === sha(A) ? "A" : k === sha(B) ? "B" : k, v])
            )
          )}`
        )
        // Only complete contents (a read racing a replacement may say "changed, retry", never less).
        expect(
          Object.keys(inProcess).filter((k) => !["A", "B", "FILE_CHANGED_DURING_READ"].includes(k))
        ).toEqual([])
        expect(inProcess.A ?? 0).toBeGreaterThan(0)
        expect(inProcess.B ?? 0).toBeGreaterThan(0)
        expect(Object.keys(raw).filter((k) => k !== sha(A) && k !== sha(B))).toEqual([])
        expect(raw[sha(A)] ?? 0).toBeGreaterThanOrEqual(3)
        expect(raw[sha(B)] ?? 0).toBeGreaterThanOrEqual(3)
        expect(leftovers(root)).toEqual([])
      })
    )
  )
})
