/**
 * The mutations a lease holder runs (the Agent Bridge, for the scripted runtime's `write:`):
 * `writeTextFile` creates or replaces a whole text file with every check an MCP create/edit
 * makes, and runs only while the caller says it holds the workdir's lease.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { AuditLog, AuditSink } from "@serverfs/telemetry-local"
import { ConfigProvider, Effect, Layer } from "effect"
import { leaseHolderMutations, WorkdirRoots } from "../../src/index.js"
import { expectCode, makeBase, removeBase, rwVars, snapshot, type Vars } from "./fixtures/harness.js"

let base = ""
let counter = 0

beforeAll(() => {
  base = makeBase("serverfs-lease-holder-")
})

afterAll(() => removeBase(base))

const freshRoot = (files: Readonly<Record<string, string>> = {}) => {
  const root = path.join(base, `wd${counter++}`)
  fs.mkdirSync(root)
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name), content)
  return root
}

const withHolder = <A, E>(
  vars: Vars,
  holds: boolean,
  body: (write: (p: string, content: string) => ReturnType<Writer>) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const m = yield* leaseHolderMutations(() => holds)
    return yield* body((p, content) => m.writeTextFile({ workdir: "wd", path: p, content }))
  }).pipe(
    Effect.provide(
      Layer.mergeAll(WorkdirRoots.Default, AuditLog.Default).pipe(
        Layer.provideMerge(WorkdirRegistry.Default),
        Layer.provideMerge(Configuration.Default),
        Layer.provide(AuditSink.memory().layer),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars)))))
      )
    )
  )
type Writer = Effect.Effect.Success<ReturnType<typeof leaseHolderMutations>>["writeTextFile"]

describe("writeTextFile as the lease holder", () => {
  it.effect("creates a new file, then replaces its whole text (mode and BOM kept)", () => {
    const root = freshRoot({ "bom.txt": "\uFEFFold\r\n" })
    fs.chmodSync(path.join(root, "bom.txt"), 0o640)
    return withHolder(rwVars(root), true, (write) =>
      Effect.gen(function* () {
        const created = yield* write("new.txt", "hello")
        expect(created.created).toBe(true)
        expect(fs.readFileSync(path.join(root, "new.txt"), "utf8")).toBe("hello")
        const replaced = yield* write("new.txt", "bye")
        expect(replaced.created).toBe(false)
        expect(fs.readFileSync(path.join(root, "new.txt"), "utf8")).toBe("bye")
        yield* write("bom.txt", "new\n")
        expect(fs.readFileSync(path.join(root, "bom.txt"), "utf8")).toBe("\uFEFFnew\n")
        expect(fs.statSync(path.join(root, "bom.txt")).mode & 0o777).toBe(0o640)
      })
    )
  })

  it.effect(
    "denied, hidden, reserved, hard-linked, symlinked, binary and outside targets are refused; nothing changes",
    () => {
      const root = freshRoot({ "linked.txt": "one\n", "cert.pem": "KEY\n", "ok.txt": "ok\n" })
      fs.linkSync(path.join(root, "linked.txt"), path.join(root, "second-name.txt"))
      fs.symlinkSync("ok.txt", path.join(root, "link.txt"))
      const before = snapshot(root)
      return withHolder(rwVars(root), true, (write) =>
        Effect.gen(function* () {
          yield* expectCode(write("cert.pem", "x"), "DENIED_PATH")
          yield* expectCode(write("id_rsa", "x"), "DENIED_PATH")
          yield* expectCode(write(".hidden.txt", "x"), "HIDDEN_PATH_NOT_ALLOWED")
          yield* expectCode(write(".serverfs-tmp-0123456789abcdef", "x"), "RESERVED_PATH")
          yield* expectCode(write("linked.txt", "x"), "MULTIPLE_HARDLINKS_NOT_SUPPORTED")
          yield* expectCode(write("second-name.txt", "x"), "MULTIPLE_HARDLINKS_NOT_SUPPORTED")
          yield* expectCode(write("link.txt", "x"), "SYMLINK_NOT_ALLOWED")
          yield* expectCode(write("ok.txt", "a\0b"), "BINARY_CONTENT_NOT_ALLOWED")
          yield* expectCode(write("../outside.txt", "x"), "PATH_OUTSIDE_WORKDIR")
          expect(snapshot(root)).toEqual(before)
        })
      )
    }
  )

  it.effect("a read-only workdir → WORKDIR_READ_ONLY", () => {
    const root = freshRoot()
    return withHolder({ ...rwVars(root), WORKDIR_01_READ_ONLY: "true" }, true, (write) =>
      Effect.gen(function* () {
        yield* expectCode(write("new.txt", "x"), "WORKDIR_READ_ONLY")
        expect(fs.readdirSync(root)).toEqual([])
      })
    )
  })

  it.effect("without the workdir's lease → WORKDIR_BUSY, nothing written", () => {
    const root = freshRoot({ "ok.txt": "ok\n" })
    return withHolder(rwVars(root), false, (write) =>
      Effect.gen(function* () {
        yield* expectCode(write("new.txt", "x"), "WORKDIR_BUSY")
        yield* expectCode(write("ok.txt", "x"), "WORKDIR_BUSY")
        expect(fs.readdirSync(root)).toEqual(["ok.txt"])
        expect(fs.readFileSync(path.join(root, "ok.txt"), "utf8")).toBe("ok\n")
      })
    )
  })
})
