/**
 * The result spool (spec v0.7 §2.5, bridge-internals §5): atomic publication, private modes,
 * exact UTF-8 chunked reads that reassemble byte for byte, and refusal of anything tampered with.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { skipWithoutRoot } from "@serverfs/testkit"
import { Effect, Layer } from "effect"
import { makeTaskId, ResultSpool, type ResultSpoolShape, TaskStore } from "../src/index.js"
import { failureTag, modeOf, scopedTempState, type TempState } from "./helpers.js"

// "another owner" chowns the spooled file to uid 65534: root only.
const withoutRoot = skipWithoutRoot("chown to uid 65534")

const withSpool = <A, E>(temp: TempState, effect: Effect.Effect<A, E, ResultSpool>) =>
  Effect.provide(effect, TaskStore.layer({ stateDir: temp.stateDir }).pipe(Layer.orDie))

const resultsDir = (temp: TempState) => path.join(temp.stateDir, "results")
const fileOf = (temp: TempState, taskId: string) => path.join(resultsDir(temp), `${taskId}.txt`)
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** ~1.3 MB of text mixing 1-, 2-, 3- and 4-byte characters, so 65536-byte cuts land mid-character. */
const bigText = (): string => {
  const parts: Array<string> = []
  let length = 0
  for (let i = 0; length < 600_000; i++) {
    const line = `${i} aé☃😀 Ωmega ${"中文".repeat(i % 7)}\n`
    parts.push(line)
    length += line.length
  }
  return parts.join("")
}

/** Reads a whole result in chunks of at most `max` bytes, checking the chunk contract as it goes. */
const readAll = (spool: ResultSpoolShape, taskId: string, max: number) =>
  Effect.gen(function* () {
    const pieces: Array<Buffer> = []
    let offset = 0
    for (;;) {
      const chunk = yield* spool.readResult(taskId, offset, max)
      expect(chunk.offset_bytes).toBe(offset)
      const bytes = Buffer.from(chunk.text, "utf8")
      expect(bytes.length).toBeLessThanOrEqual(max)
      expect(chunk.next_offset_bytes).toBe(offset + bytes.length)
      pieces.push(bytes)
      offset = chunk.next_offset_bytes
      if (chunk.eof) break
      expect(bytes.length).toBeGreaterThan(0)
    }
    return Buffer.concat(pieces)
  })

describe("writeResult", () => {
  it.scoped(
    "publishes atomically: no temp file left, 0700 directory, 0600 file, size and sha256 returned",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withSpool(
          temp,
          Effect.gen(function* () {
            const spool = yield* ResultSpool
            const taskId = yield* makeTaskId
            const text = "héllo ☃ 😀"
            const written = yield* spool.writeResult(taskId, text)
            expect(written).toEqual({
              size_bytes: Buffer.byteLength(text),
              sha256: sha256(Buffer.from(text))
            })
            expect(fs.readdirSync(resultsDir(temp))).toEqual([`${taskId}.txt`])
            expect(fs.readFileSync(fileOf(temp, taskId), "utf8")).toBe(text)
            expect(modeOf(resultsDir(temp))).toBe(0o700)
            expect(modeOf(fileOf(temp, taskId))).toBe(0o600)
          })
        )
      )
  )

  it.scoped("an existing result is never replaced → AGENT_RESULT_STORAGE_ERROR, no temp file left", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withSpool(
        temp,
        Effect.gen(function* () {
          const spool = yield* ResultSpool
          const taskId = yield* makeTaskId
          yield* spool.writeResult(taskId, "first")
          const exit = yield* Effect.exit(spool.writeResult(taskId, "second"))
          expect(failureTag(exit)).toBe("AGENT_RESULT_STORAGE_ERROR")
          expect(fs.readFileSync(fileOf(temp, taskId), "utf8")).toBe("first")
          expect(fs.readdirSync(resultsDir(temp))).toEqual([`${taskId}.txt`])
        })
      )
    )
  )

  it.scoped("racing writers of one task: exactly one publishes, the file holds its bytes intact", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withSpool(
        temp,
        Effect.gen(function* () {
          const spool = yield* ResultSpool
          const taskId = yield* makeTaskId
          const contents = Array.from({ length: 8 }, (_, i) => `${i}`.repeat(100_000 + i))
          const outcomes = yield* Effect.all(
            contents.map((content) => Effect.either(spool.writeResult(taskId, content))),
            { concurrency: "unbounded" }
          )
          const winners = outcomes.flatMap((o, i) => (o._tag === "Right" ? [i] : []))
          expect(winners).toHaveLength(1)
          expect(fs.readFileSync(fileOf(temp, taskId), "utf8")).toBe(contents[winners[0] ?? -1])
          expect(fs.readdirSync(resultsDir(temp))).toEqual([`${taskId}.txt`])
        })
      )
    )
  )

  it.scoped("task ids outside agt_ + 24 hex, and bytes that are not UTF-8, are refused", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withSpool(
        temp,
        Effect.gen(function* () {
          const spool = yield* ResultSpool
          for (const bad of [
            "../agt_000000000000000000000000",
            "req_000000000000000000000000",
            "agt_XYZ",
            ""
          ]) {
            expect(failureTag(yield* Effect.exit(spool.writeResult(bad, "x"))), bad).toBe(
              "AGENT_RESULT_STORAGE_ERROR"
            )
            expect(failureTag(yield* Effect.exit(spool.readResult(bad, 0, 10))), bad).toBe(
              "AGENT_RESULT_STORAGE_ERROR"
            )
            expect(failureTag(yield* Effect.exit(spool.removeResult(bad))), bad).toBe(
              "AGENT_RESULT_STORAGE_ERROR"
            )
          }
          const taskId = yield* makeTaskId
          const invalid = yield* Effect.exit(spool.writeResult(taskId, new Uint8Array([0x61, 0xe2, 0x98])))
          expect(failureTag(invalid)).toBe("AGENT_RESULT_STORAGE_ERROR")
          expect(fs.existsSync(fileOf(temp, taskId))).toBe(false)
        })
      )
    )
  )

  it.scoped("an unsafe results directory is refused, not repaired", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withSpool(
        temp,
        Effect.gen(function* () {
          const spool = yield* ResultSpool
          fs.mkdirSync(resultsDir(temp), { mode: 0o700 })
          fs.chmodSync(resultsDir(temp), 0o777)
          const taskId = yield* makeTaskId
          expect(failureTag(yield* Effect.exit(spool.writeResult(taskId, "x")))).toBe(
            "AGENT_RESULT_STORAGE_ERROR"
          )
          expect(fs.readdirSync(resultsDir(temp))).toEqual([])
          fs.rmdirSync(resultsDir(temp))
          const elsewhere = path.join(temp.base, "elsewhere")
          fs.mkdirSync(elsewhere, { mode: 0o700 })
          fs.symlinkSync(elsewhere, resultsDir(temp))
          expect(failureTag(yield* Effect.exit(spool.writeResult(taskId, "x")))).toBe(
            "AGENT_RESULT_STORAGE_ERROR"
          )
          expect(fs.readdirSync(elsewhere)).toEqual([])
        })
      )
    )
  )
})

describe("readResult", () => {
  it.scoped("a large multi-byte text reassembles byte for byte from 65536-byte chunks (and odd sizes)", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withSpool(
        temp,
        Effect.gen(function* () {
          const spool = yield* ResultSpool
          const taskId = yield* makeTaskId
          const text = bigText()
          const stored = Buffer.from(text, "utf8")
          expect(stored.length).toBeGreaterThan(4 * 65_536)
          const written = yield* spool.writeResult(taskId, stored)
          for (const max of [65_536, 65_535, 4097]) {
            const rebuilt = yield* readAll(spool, taskId, max)
            expect(rebuilt.length, `max ${max}`).toBe(stored.length)
            expect(sha256(rebuilt), `max ${max}`).toBe(written.sha256)
          }
        })
      )
    )
  )

  it.scoped(
    "an offset inside a character or past the end → INVALID_RESULT_OFFSET; exactly at the end → eof",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withSpool(
          temp,
          Effect.gen(function* () {
            const spool = yield* ResultSpool
            const taskId = yield* makeTaskId
            const text = "a😀b" // bytes: a | f0 9f 98 80 | b → 6 bytes
            yield* spool.writeResult(taskId, text)
            for (const inside of [2, 3, 4]) {
              expect(failureTag(yield* Effect.exit(spool.readResult(taskId, inside, 10))), `${inside}`).toBe(
                "INVALID_RESULT_OFFSET"
              )
            }
            expect(failureTag(yield* Effect.exit(spool.readResult(taskId, 7, 10)))).toBe(
              "INVALID_RESULT_OFFSET"
            )
            expect(failureTag(yield* Effect.exit(spool.readResult(taskId, -1, 10)))).toBe(
              "INVALID_RESULT_OFFSET"
            )
            expect(yield* spool.readResult(taskId, 6, 10)).toEqual({
              text: "",
              offset_bytes: 6,
              next_offset_bytes: 6,
              eof: true
            })
            expect(yield* spool.readResult(taskId, 1, 10)).toEqual({
              text: "😀b",
              offset_bytes: 1,
              next_offset_bytes: 6,
              eof: true
            })
            // A chunk never ends inside a character: 3 bytes from 0 stop before the emoji.
            expect(yield* spool.readResult(taskId, 0, 3)).toEqual({
              text: "a",
              offset_bytes: 0,
              next_offset_bytes: 1,
              eof: false
            })
            expect(yield* spool.readResult(taskId, 0, 5)).toEqual({
              text: "a😀",
              offset_bytes: 0,
              next_offset_bytes: 5,
              eof: false
            })
            for (const max of [0, 65_537, 1.5]) {
              expect(failureTag(yield* Effect.exit(spool.readResult(taskId, 0, max))), `${max}`).toBe(
                "INVALID_RESULT_LIMIT"
              )
            }
            // A limit smaller than the next character cannot make progress.
            expect(failureTag(yield* Effect.exit(spool.readResult(taskId, 1, 3)))).toBe(
              "INVALID_RESULT_LIMIT"
            )
          })
        )
      )
  )

  it.scoped.skipIf(withoutRoot)(
    "a tampered mode, another owner, a symlink, a missing file or broken UTF-8 → AGENT_RESULT_STORAGE_ERROR",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withSpool(
          temp,
          Effect.gen(function* () {
            const spool = yield* ResultSpool
            const taskId = yield* makeTaskId
            yield* spool.writeResult(taskId, "secret")
            const file = fileOf(temp, taskId)
            const storageError = () => Effect.map(Effect.exit(spool.readResult(taskId, 0, 10)), failureTag)

            fs.chmodSync(file, 0o644)
            expect(yield* storageError()).toBe("AGENT_RESULT_STORAGE_ERROR")
            fs.chmodSync(file, 0o600)
            expect((yield* spool.readResult(taskId, 0, 10)).text).toBe("secret")

            fs.chownSync(file, 65534, 65534)
            expect(yield* storageError()).toBe("AGENT_RESULT_STORAGE_ERROR")
            fs.chownSync(file, process.getuid?.() ?? 0, process.getgid?.() ?? 0)

            const real = path.join(temp.base, "real.txt")
            fs.writeFileSync(real, "planted", { mode: 0o600 })
            fs.unlinkSync(file)
            fs.symlinkSync(real, file)
            expect(yield* storageError()).toBe("AGENT_RESULT_STORAGE_ERROR")
            fs.unlinkSync(file)
            expect(yield* storageError()).toBe("AGENT_RESULT_STORAGE_ERROR")

            fs.writeFileSync(file, Buffer.from([0x61, 0xff, 0x62]), { mode: 0o600 })
            expect(yield* storageError()).toBe("AGENT_RESULT_STORAGE_ERROR")

            fs.chmodSync(resultsDir(temp), 0o750)
            expect(yield* storageError()).toBe("AGENT_RESULT_STORAGE_ERROR")
          })
        )
      )
  )
})

describe("removeResult", () => {
  it.scoped("removes the file and reports whether there was one", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withSpool(
        temp,
        Effect.gen(function* () {
          const spool = yield* ResultSpool
          const taskId = yield* makeTaskId
          expect(yield* spool.removeResult(taskId)).toBe(false)
          yield* spool.writeResult(taskId, "x")
          expect(yield* spool.removeResult(taskId)).toBe(true)
          expect(fs.existsSync(fileOf(temp, taskId))).toBe(false)
          expect(yield* spool.removeResult(taskId)).toBe(false)
          // Removed means a new result may be written (e.g. never in practice, but no ghost remains).
          yield* spool.writeResult(taskId, "y")
        })
      )
    )
  )
})

describe("the in-memory spool (TaskStore.layerMemory)", () => {
  it.effect("follows the same contract", () =>
    Effect.provide(
      Effect.gen(function* () {
        const spool = yield* ResultSpool
        const taskId = yield* makeTaskId
        const stored = Buffer.from(bigText().slice(0, 200_000), "utf8")
        const written = yield* spool.writeResult(taskId, stored)
        expect(sha256(yield* readAll(spool, taskId, 65_536))).toBe(written.sha256)
        expect(failureTag(yield* Effect.exit(spool.writeResult(taskId, "again")))).toBe(
          "AGENT_RESULT_STORAGE_ERROR"
        )
        expect(failureTag(yield* Effect.exit(spool.readResult(taskId, stored.length + 1, 10)))).toBe(
          "INVALID_RESULT_OFFSET"
        )
        expect(yield* spool.removeResult(taskId)).toBe(true)
        expect(failureTag(yield* Effect.exit(spool.readResult(taskId, 0, 10)))).toBe(
          "AGENT_RESULT_STORAGE_ERROR"
        )
      }),
      TaskStore.layerMemory()
    )
  )
})
