/**
 * issue 14, item 4: read_text_file and the resource skip lines with bounded work. A sparse 50 GB
 * file (40 text lines, then a hole: no disk used) with a large start_line used to hold the whole
 * server for about a minute; now the read stops at the scan bound or the deadline with
 * READ_LIMIT_EXCEEDED, and other calls are answered while it runs.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { expectCode, type Vars, withChannels, workdirVars } from "./fixtures/channels.js"
import { makeBase, removeBase } from "./fixtures/tree.js"

const SPARSE_BYTES = 50 * 1024 ** 3
const MiB = 1024 * 1024

let base = ""
let root = ""

beforeAll(() => {
  base = makeBase("serverfs-ws-readlimits-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  const text = Array.from({ length: 40 }, (_, i) => `${`line ${i + 1} `.padEnd(39, "-")}\n`).join("")
  fs.writeFileSync(path.join(root, "sparse.log"), text)
  // The hole after the text reads as NUL bytes, past the 1024-byte binary probe.
  fs.truncateSync(path.join(root, "sparse.log"), SPARSE_BYTES)
  fs.writeFileSync(path.join(root, "small.txt"), "one\ntwo\n")
  // 3 MiB of short lines: reaching the last ones needs more than a 1 MiB scan bound.
  fs.writeFileSync(path.join(root, "lines.txt"), "0123456789abcde\n".repeat((3 * MiB) / 16))
})

afterAll(() => removeBase(base))

const limited = (extra: Vars): Vars => workdirVars(root, extra)

describe("read work bounds", () => {
  it.effect("a large start_line on a sparse 50 GB file → READ_LIMIT_EXCEEDED at the scan bound", () =>
    withChannels(limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(4 * MiB) }), (a) =>
      Effect.gen(function* () {
        const error = yield* expectCode(
          a.read("wd", "sparse.log", { startLine: 1_000_000 }),
          "READ_LIMIT_EXCEEDED"
        )
        expect(error.message).toContain(`${4 * MiB} bytes`)
      })
    )
  )

  it.effect(
    "the resource keeps its own budget: the sparse file's hole → LINE_TOO_LARGE, many lines → RESOURCE_TOO_LARGE",
    () =>
      withChannels(limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(4 * MiB) }), (a) =>
        Effect.gen(function* () {
          // The resource starts at line 1, so it never scans more than one page and a line.
          yield* expectCode(a.resource("wd", "sparse.log"), "LINE_TOO_LARGE")
          yield* expectCode(a.resource("wd", "lines.txt"), "RESOURCE_TOO_LARGE")
        })
      )
  )

  it.effect("a scan bound below the page budget also bounds the resource → READ_LIMIT_EXCEEDED", () =>
    withChannels(
      limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(1 * MiB), SERVERFS_MAX_READ_BYTES: String(2 * MiB) }),
      (a) => expectCode(a.resource("wd", "sparse.log"), "READ_LIMIT_EXCEEDED")
    )
  )

  it.live("with a large scan bound, the deadline ends the read → READ_LIMIT_EXCEEDED", () =>
    withChannels(
      limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(64 * 1024 ** 3), SERVERFS_READ_TIMEOUT_SECONDS: "0.5" }),
      (a) =>
        Effect.gen(function* () {
          const started = Date.now()
          const error = yield* expectCode(
            a.read("wd", "sparse.log", { startLine: 1_000_000 }),
            "READ_LIMIT_EXCEEDED"
          )
          expect(error.message).toContain("exceeded 0.5s")
          // Liveness only: the 50 GB hole would take minutes to read.
          expect(Date.now() - started).toBeLessThan(10_000)
        })
    )
  )

  it.live("other calls are answered while a hostile read runs", () =>
    withChannels(
      limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(64 * 1024 ** 3), SERVERFS_READ_TIMEOUT_SECONDS: "5" }),
      (a) =>
        Effect.gen(function* () {
          const hostile = yield* Effect.fork(
            Effect.either(a.read("wd", "sparse.log", { startLine: 1_000_000 }))
          )
          // Several small reads complete before the hostile one ends (it needs its full 5 s).
          for (let i = 0; i < 5; i++) {
            const page = yield* a.read("wd", "small.txt")
            expect(page.content).toBe("one\ntwo\n")
          }
          expect(Option.isNone(yield* Fiber.poll(hostile))).toBe(true)
          const outcome = yield* Fiber.join(hostile)
          expect(outcome._tag === "Left" && outcome.left._tag).toBe("READ_LIMIT_EXCEEDED")
        })
    )
  )

  it.effect("a page reachable within the scan bound is returned unchanged", () =>
    withChannels(limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(1 * MiB) }), (a) =>
      Effect.gen(function* () {
        const page = yield* a.read("wd", "lines.txt", { startLine: 1000, maxLines: 2 })
        expect(page.content).toBe("0123456789abcde\n0123456789abcde\n")
        expect(page.has_more).toBe(true)
        // Line 100000 starts at byte 1.6 MB, past the 1 MiB bound.
        yield* expectCode(a.read("wd", "lines.txt", { startLine: 100_000 }), "READ_LIMIT_EXCEEDED")
      })
    )
  )

  it.effect("a file ending exactly at the scan bound is read to its end", () =>
    withChannels(limited({ SERVERFS_MAX_READ_SCAN_BYTES: String(1 * MiB) }), (a) =>
      Effect.gen(function* () {
        fs.writeFileSync(path.join(root, "exact.txt"), "0123456789abcde\n".repeat(MiB / 16))
        const page = yield* a.read("wd", "exact.txt", { startLine: MiB / 16, maxLines: 5 })
        expect(page.content).toBe("0123456789abcde\n")
        expect(page.has_more).toBe(false)
      })
    )
  )
})
