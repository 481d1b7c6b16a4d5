/**
 * Filesystem failures during a mutation (tool-contracts §0 mutation mapping, §2.7: "a write or
 * link failure gives MUTATION_IO_ERROR, with no final file and no temp left behind"; spec v0.2
 * §6: a failure before publication publishes nothing). The workdir is a tiny tmpfs mounted for
 * this suite, so running out of space or inodes, and a read-only remount, are deterministic.
 *
 * Needs root with the right to mount (CI runs as root); without it the suite fails loudly.
 */
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  bytesOf,
  expectCode,
  leftovers,
  makeBase,
  removeBase,
  revisionAt,
  rwVars,
  snapshot,
  withoutRoot,
  withServer
} from "./fixtures/harness.js"

let base = ""
let mountPoint = ""
let root = ""

const mount = (options: string) => execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", mountPoint])

// A small tmpfs is mounted to exhaust space and inodes on purpose: root only.
const skipped = withoutRoot("mount a tmpfs")

beforeAll(() => {
  if (skipped) return
  base = makeBase("serverfs-mut-io-")
  mountPoint = path.join(base, "mnt")
  fs.mkdirSync(mountPoint)
  // 64 KiB of data and 12 inodes: small enough to exhaust on purpose.
  mount("size=64k,nr_inodes=12,mode=0755")
  root = path.join(mountPoint, "wd")
  fs.mkdirSync(root)
})

afterAll(() => {
  if (mountPoint !== "") {
    try {
      execFileSync("umount", [mountPoint])
    } catch {
      execFileSync("umount", ["-l", mountPoint])
    }
  }
  if (base !== "") removeBase(base)
})

const ioError = (p: string, reason: string) => `MUTATION_IO_ERROR: wd:${p} — the operation failed (${reason})`

describe.skipIf(skipped)(
  "a failing write, link or directory operation → MUTATION_IO_ERROR, nothing published, no temp",
  () => {
    it.effect("no space for a created file's content: no target, no temp", () =>
      withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const before = snapshot(root, false)
          yield* expectCode(
            h.create("big.txt", "x".repeat(200 * 1024)),
            "MUTATION_IO_ERROR",
            ioError("big.txt", "no space left on device")
          )
          expect(snapshot(root, false)).toEqual(before)
          expect(leftovers(root)).toEqual([])
          // Space is back: the same call now succeeds.
          yield* h.create("small.txt", "fits\n")
          expect(fs.readFileSync(path.join(root, "small.txt"), "utf8")).toBe("fits\n")
        })
      )
    )

    it.effect("no space for an edit's replacement: the original is untouched, no temp", () =>
      withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const made = yield* h.create("grow.txt", `${"g".repeat(20 * 1024)}\nMARK\n`)
          const before = snapshot(root, false)
          const bytes = bytesOf(path.join(root, "grow.txt"))
          yield* expectCode(
            h.edit("grow.txt", made.revision, [{ old_text: "MARK", new_text: "y".repeat(60 * 1024) }]),
            "MUTATION_IO_ERROR",
            ioError("grow.txt", "no space left on device")
          )
          expect(bytesOf(path.join(root, "grow.txt"))).toEqual(bytes)
          expect(revisionAt(path.join(root, "grow.txt"))).toBe(made.revision)
          expect(snapshot(root, false)).toEqual(before)
          expect(leftovers(root)).toEqual([])
          yield* h.del("grow.txt", made.revision)
        })
      )
    )

    it.effect("no inode left: create and mkdir fail cleanly", () =>
      withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          // Use up the inodes with directories until mkdir itself reports the failure.
          const made: string[] = []
          let refused = ""
          for (let i = 0; i < 20 && refused === ""; i++) {
            const outcome = yield* Effect.either(h.mkdir(`fill-${i}`))
            if (outcome._tag === "Right") made.push(`fill-${i}`)
            else refused = `${outcome.left._tag}: ${outcome.left.message}`
          }
          expect(refused).toBe(ioError(`fill-${made.length}`, "no space left on device"))
          const before = snapshot(root, false)
          yield* expectCode(
            h.create("one-more.txt", "x"),
            "MUTATION_IO_ERROR",
            ioError("one-more.txt", "no space left on device")
          )
          expect(snapshot(root, false)).toEqual(before)
          expect(leftovers(root)).toEqual([])
          for (const name of made) yield* h.rmdir(name, revisionAt(path.join(root, name)))
        })
      )
    )

    it.effect("a read-only mount under a read-write workdir: every mutation fails, nothing changes", () =>
      withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const file = yield* h.create("ro.txt", "frozen a\n")
          const dir = yield* h.mkdir("ro-dir")
          execFileSync("mount", ["-o", "remount,ro", mountPoint])
          const before = snapshot(root, false)
          const erofs = "read-only file system"
          yield* Effect.ensuring(
            Effect.gen(function* () {
              yield* expectCode(h.create("new.txt", "x"), "MUTATION_IO_ERROR", ioError("new.txt", erofs))
              yield* expectCode(
                h.edit("ro.txt", file.revision, [{ old_text: "a", new_text: "b" }]),
                "MUTATION_IO_ERROR",
                ioError("ro.txt", erofs)
              )
              yield* expectCode(h.del("ro.txt", file.revision), "MUTATION_IO_ERROR", ioError("ro.txt", erofs))
              yield* expectCode(h.mkdir("new-dir"), "MUTATION_IO_ERROR", ioError("new-dir", erofs))
              yield* expectCode(
                h.rmdir("ro-dir", dir.revision),
                "MUTATION_IO_ERROR",
                ioError("ro-dir", erofs)
              )
              expect(snapshot(root, false)).toEqual(before)
            }),
            Effect.sync(() => execFileSync("mount", ["-o", "remount,rw", mountPoint]))
          )
          yield* h.del("ro.txt", file.revision)
          yield* h.rmdir("ro-dir", dir.revision)
        })
      )
    )
  }
)
