/**
 * Attack tests for edit_text_file's work bound (issue 14, items 2 and 3), in-process against the
 * service graph the MCP server uses, on a file of one million `a` (under the default
 * SERVERFS_MAX_WRITE_BYTES of 1 MiB). Each hostile call must end with its code (or a correct
 * result) within a liveness bound of seconds, with the process's peak memory (maxRSS, which
 * also sees a transient allocation) growing by far less than the gigabytes the old planner
 * reached, and with the file unchanged when refused.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Edit,
  expectCode,
  makeBase,
  removeBase,
  revisionAt,
  rwVars,
  snapshot,
  withServer
} from "./fixtures/harness.js"

const MILLION_A = "a".repeat(1_000_000)
/** Liveness bound of a hostile call: the old planner took 6.8 s, 75 s, or crashed the process. */
const LIVENESS_MS = 10_000
/** Peak-memory growth allowed for one call (robust, not tight: the old planner reached 2.6 GB). */
const MAX_PEAK_GROWTH_BYTES = 300 * 1024 * 1024

let base = ""
let counter = 0

beforeAll(() => {
  base = makeBase("serverfs-edit-bounds-")
})

afterAll(() => removeBase(base))

const freshFile = (content: string) => {
  const root = path.join(base, `wd${counter++}`)
  fs.mkdirSync(root)
  const file = path.join(root, "big.txt")
  fs.writeFileSync(file, content)
  return { root, file, vars: rwVars(root) }
}

/** Run `call`, then check it stayed within the liveness and peak-memory bounds. */
const bounded = <A, E, R>(call: Effect.Effect<A, E, R>, livenessMs = LIVENESS_MS) =>
  Effect.gen(function* () {
    const peakBefore = process.resourceUsage().maxRSS * 1024
    const started = performance.now()
    const result = yield* call
    expect(performance.now() - started).toBeLessThan(livenessMs)
    expect(process.resourceUsage().maxRSS * 1024 - peakBefore).toBeLessThan(MAX_PEAK_GROWTH_BYTES)
    return result
  })

const refusedUnchanged = (edits: ReadonlyArray<Edit>, code: string, text?: string) => {
  const { root, file, vars } = freshFile(MILLION_A)
  const before = snapshot(root)
  return withServer(vars, (h) =>
    Effect.gen(function* () {
      yield* bounded(expectCode(h.edit("big.txt", revisionAt(file), edits), code, text))
      expect(snapshot(root)).toEqual(before)
    })
  )
}

describe("edit_text_file: hostile edit lists end within their bound", () => {
  it.effect(
    "401 bytes of edits growing 1 MB to 200 MB, then 200 M matches → WRITE_TOO_LARGE (was: process killed)",
    () =>
      refusedUnchanged(
        [
          { old_text: "a", new_text: "b".repeat(200), expected_count: 1_000_000 },
          { old_text: "b", new_text: "b", expected_count: 200_000_000 }
        ],
        "WRITE_TOO_LARGE",
        "WRITE_TOO_LARGE: wd:big.txt — exceeds the write limit of 1048576 bytes"
      )
  )

  it.effect(
    "one edit whose result would be 200 MB → WRITE_TOO_LARGE before it is built (was: 6.8 s, 2.6 GB)",
    () =>
      refusedUnchanged(
        [{ old_text: "a", new_text: "b".repeat(200), expected_count: 1_000_000 }],
        "WRITE_TOO_LARGE"
      )
  )

  it.effect(
    "an intermediate text over the limit → WRITE_TOO_LARGE even if a later edit shrinks it back",
    () =>
      refusedUnchanged(
        [
          { old_text: "a", new_text: "aa", expected_count: 1_000_000 },
          { old_text: "aa", new_text: "a", expected_count: 1_000_000 }
        ],
        "WRITE_TOO_LARGE"
      )
  )

  it.effect("a 500 kB needle 'a…a b a…a' in a million 'a' → EDIT_CONFLICT, found 0 (was: 75 s)", () =>
    refusedUnchanged(
      [{ old_text: `${"a".repeat(250_000)}b${"a".repeat(249_999)}`, new_text: "" }],
      "EDIT_CONFLICT",
      "EDIT_CONFLICT: wd:big.txt — expected 1 occurrence(s), found 0"
    )
  )

  it.effect("a needle of 500 kB 'a' with the wrong count → EDIT_CONFLICT, found 2", () =>
    refusedUnchanged(
      [{ old_text: "a".repeat(500_000), new_text: "", expected_count: 3 }],
      "EDIT_CONFLICT",
      "EDIT_CONFLICT: wd:big.txt — expected 3 occurrence(s), found 2"
    )
  )
})

describe("edit_text_file: large legitimate edits still work, within the same bound", () => {
  it.effect("a million one-byte replacements, then a 250 kB needle four times", () => {
    const { file, vars } = freshFile(MILLION_A)
    return withServer(vars, (h) =>
      Effect.gen(function* () {
        const first = yield* bounded(
          h.edit("big.txt", revisionAt(file), [
            { old_text: "a", new_text: "b", expected_count: 1_000_000 },
            { old_text: "b".repeat(250_000), new_text: "c", expected_count: 4 }
          ])
        )
        expect(first.bytes_after).toBe(4)
        expect(fs.readFileSync(file, "utf8")).toBe("cccc")
      })
    )
  })

  it.effect("the most work one call can ask for at the default limits: 50 edits × a million matches", () => {
    const { file, vars } = freshFile(MILLION_A)
    const swaps: Array<Edit> = []
    for (let i = 0; i < 50; i++) {
      swaps.push(
        i % 2 === 0
          ? { old_text: "a", new_text: "b", expected_count: 1_000_000 }
          : { old_text: "b", new_text: "a", expected_count: 1_000_000 }
      )
    }
    return withServer(vars, (h) =>
      Effect.gen(function* () {
        // About 1.5 s on an idle machine; the bound leaves room for a loaded CI runner.
        const done = yield* bounded(h.edit("big.txt", revisionAt(file), swaps), 30_000)
        expect(done.edits_applied).toBe(50)
        expect(fs.readFileSync(file, "utf8")).toBe(MILLION_A)
      })
    )
  })

  it.effect("growing to exactly the limit is accepted; one byte more is WRITE_TOO_LARGE", () => {
    const { file, vars } = freshFile(`Q${"x".repeat(1_048_576 - 3)}`)
    return withServer(vars, (h) =>
      Effect.gen(function* () {
        yield* expectCode(
          h.edit("big.txt", revisionAt(file), [{ old_text: "Q", new_text: "QQQQ" }]),
          "WRITE_TOO_LARGE"
        )
        const done = yield* h.edit("big.txt", revisionAt(file), [{ old_text: "Q", new_text: "QQQ" }])
        expect(done.bytes_after).toBe(1_048_576)
      })
    )
  })
})
