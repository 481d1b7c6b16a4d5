/**
 * The contract of the five mutation tools (spec v0.2 §3–§6, tool-contracts §2.7–§2.11, §5, §6),
 * in-process against the service graph the MCP server uses. Every refusal is checked for its
 * exact `CODE: message` text and for what it left on disk: a refused mutation changes nothing
 * (bytes, inode, times, link targets), and no channel ever shows a reserved temp entry.
 */
import fs from "node:fs"
import type net from "node:net"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { location, type MutationError } from "@serverfs/domain"
import { Effect } from "effect"
import {
  type AnyError,
  type Api,
  asUserEffect,
  bindSocket,
  bytesOf,
  closeServer,
  expectCode,
  leftovers,
  makeBase,
  mkfifo,
  removeBase,
  revisionAt,
  rwVars,
  snapshot,
  TEMP_PREFIX,
  type Vars,
  withoutRoot,
  withServer
} from "./fixtures/harness.js"

// Permission refusals are provoked by switching the effective uid to 65534: root only.
const seteuidSkipped = withoutRoot("seteuid to uid 65534")

let base = ""
let outside = ""
let counter = 0
const sockets: net.Server[] = []

beforeAll(() => {
  base = makeBase("serverfs-mut-contract-")
  outside = path.join(base, "outside")
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.txt"), "OUTSIDE SECRET\n")
  fs.writeFileSync(path.join(outside, "inner.txt"), "outside inner\n")
  fs.mkdirSync(path.join(outside, "emptydir"))
})

afterAll(async () => {
  await Promise.all(sockets.splice(0).map(closeServer))
  removeBase(base)
})

/** A fresh workdir directory holding `files` (a trailing "/" makes a directory). */
const freshRoot = (files: Readonly<Record<string, string | Buffer>> = {}): string => {
  const root = path.join(base, `wd${counter++}`)
  fs.mkdirSync(root)
  for (const [name, content] of Object.entries(files)) {
    const at = path.join(root, name)
    if (name.endsWith("/")) {
      fs.mkdirSync(at, { recursive: true })
    } else {
      fs.mkdirSync(path.dirname(at), { recursive: true })
      fs.writeFileSync(at, content)
    }
  }
  return root
}

const socketAt = (absolute: string) =>
  Effect.promise(async () => {
    sockets.push(await bindSocket(absolute))
  })

const GARBAGE = "v1:0000000000000000"

/** The same path through all five tools (revision-bearing ones get `revision`). */
const allFive = (
  h: Api,
  p: string,
  revision = GARBAGE
): ReadonlyArray<readonly [string, Effect.Effect<unknown, MutationError>]> => [
  ["create_text_file", h.create(p, "new content\n")],
  ["edit_text_file", h.edit(p, revision, [{ old_text: "a", new_text: "b" }])],
  ["delete_file", h.del(p, revision)],
  ["create_directory", h.mkdir(p)],
  ["delete_directory", h.rmdir(p, revision)]
]

/** Every call of `calls` fails with `code` and exactly `text`. */
const expectAll = (
  calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, MutationError>]>,
  code: string,
  text: string
) =>
  Effect.forEach(calls, ([tool, call]) =>
    Effect.map(Effect.either(call), (either) => {
      const seen = either._tag === "Left" ? `${either.left._tag}: ${either.left.message}` : "success"
      expect(`${tool} → ${seen}`).toBe(`${tool} → ${text}`)
      expect(text.startsWith(`${code}: `)).toBe(true)
    })
  )

const at = (workdir: string, p: string) => location(workdir, p)

const TOOLS = ["create_text_file", "edit_text_file", "delete_file", "create_directory", "delete_directory"]

describe("check order: workdir, read-only, path policy, root, arguments, filesystem", () => {
  const vars = (root: string, roRoot: string): Vars => ({
    ...rwVars(root),
    WORKDIR_02_ALIAS: "ro",
    WORKDIR_02_PATH: roRoot
  })

  const roCalls = (h: Api, p: string, revision: string) =>
    [
      h.create(p, "x", "ro"),
      h.edit(p, revision, [{ old_text: "a", new_text: "b" }], "ro"),
      h.del(p, revision, "ro"),
      h.mkdir(p, "ro"),
      h.rmdir(p, revision, "ro")
    ].map((call, i) => [TOOLS[i]!, call] as const)

  it.effect("an unknown alias is WORKDIR_NOT_FOUND on all five (aliases are case-sensitive)", () =>
    withServer(vars(freshRoot(), freshRoot()), (h) =>
      Effect.forEach(
        [
          h.create("x.txt", "x", "nope") as Effect.Effect<unknown, MutationError>,
          h.edit("x.txt", GARBAGE, [{ old_text: "a", new_text: "b" }], "nope"),
          h.del("x.txt", GARBAGE, "nope"),
          h.mkdir("x", "nope"),
          h.rmdir("x", GARBAGE, "nope"),
          h.create(".env", "\0", "nope")
        ],
        (call) =>
          expectCode(call, "WORKDIR_NOT_FOUND", "WORKDIR_NOT_FOUND: 'nope' is not a configured workdir")
      ).pipe(Effect.andThen(expectCode(h.create("x.txt", "x", "WD"), "WORKDIR_NOT_FOUND")))
    )
  )

  it.effect("a read-only workdir answers WORKDIR_READ_ONLY before looking at the path at all", () => {
    const roRoot = freshRoot({ "x.txt": "a\n", "d/": "", ".env": "SECRET=1\n" })
    const before = snapshot(roRoot)
    const revision = revisionAt(path.join(roRoot, "x.txt"))
    return withServer(vars(freshRoot(), roRoot), (h) =>
      Effect.gen(function* () {
        const text = "WORKDIR_READ_ONLY: 'ro' is read-only"
        // Would be HIDDEN, DENIED, OUTSIDE, RESERVED, ROOT, PARENT_NOT_FOUND or a success in "wd".
        for (const p of [
          ".env",
          "private.pem",
          "../escape",
          "/etc/passwd",
          ".serverfs-tmp-x",
          "",
          "sub/..",
          "missing/x",
          "x.txt",
          "d"
        ]) {
          yield* expectAll(roCalls(h, p, revision), "WORKDIR_READ_ONLY", text)
        }
        // Argument errors come after the read-only gate too.
        yield* expectCode(h.create("new.txt", "nul\0", "ro"), "WORKDIR_READ_ONLY", text)
        expect(snapshot(roRoot)).toEqual(before)
        // Reads stay available in the read-only workdir.
        expect((yield* h.read("x.txt", "ro")).content).toBe("a\n")
      })
    )
  })

  it.effect("the path policy applies to all five before the root check and the arguments", () => {
    const root = freshRoot()
    return withServer(vars(root, freshRoot()), (h) =>
      Effect.gen(function* () {
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          [".env", "HIDDEN_PATH_NOT_ALLOWED", "hidden paths are not allowed in this workdir"],
          [".ssh/config", "HIDDEN_PATH_NOT_ALLOWED", "hidden paths are not allowed in this workdir"],
          ["private.pem", "DENIED_PATH", "path is denied by policy"],
          ["keys/id_rsa", "DENIED_PATH", "path is denied by policy"],
          // Built-in credential rules ignore ASCII case (deviation 54).
          ["KEY.PEM", "DENIED_PATH", "path is denied by policy"],
          ["keys/ID_RSA", "DENIED_PATH", "path is denied by policy"],
          ["Prod.Env", "DENIED_PATH", "path is denied by policy"],
          ["CERTS.Key/new.txt", "DENIED_PATH", "path is denied by policy"],
          ["../x.txt", "PATH_OUTSIDE_WORKDIR", "resolved path escapes the workdir"],
          ["a/../../x", "PATH_OUTSIDE_WORKDIR", "resolved path escapes the workdir"],
          ["/etc/x", "PATH_OUTSIDE_WORKDIR", "resolved path escapes the workdir"],
          [".serverfs-tmp-1", "RESERVED_PATH", "path is reserved for ServerFS internals"],
          ["a\0b.txt", "ACCESS_DENIED", "access denied (path contains NUL bytes)"]
        ]
        for (const [p, code, phrase] of cases) {
          yield* expectAll(allFive(h, p), code, `${code}: ${at("wd", p)} — ${phrase}`)
        }
        // Policy before argument checks: NUL content on a hidden path is still HIDDEN.
        yield* expectCode(h.create(".env", "a\0b"), "HIDDEN_PATH_NOT_ALLOWED")
        // Root before argument checks.
        yield* expectCode(h.create("", "a\0b"), "ROOT_MUTATION_NOT_ALLOWED")
        // Argument checks before the filesystem: the parent is missing, the content is refused first.
        yield* expectCode(h.create("missing/x.txt", "a\0b"), "BINARY_CONTENT_NOT_ALLOWED")
        expect(fs.readdirSync(root)).toEqual([])
      })
    )
  })

  it.effect(
    "SERVERFS_EXTRA_DENY_GLOBS applies to would-be paths; ALLOW_HIDDEN releases .env to DENIED",
    () => {
      const root = freshRoot({ "internal/": "" })
      return withServer(
        rwVars(root, { SERVERFS_EXTRA_DENY_GLOBS: "internal/**,*.log", SERVERFS_ALLOW_HIDDEN: "true" }),
        (h) =>
          Effect.gen(function* () {
            for (const p of ["internal/new.txt", "internal", "x.log"]) {
              yield* expectAll(
                allFive(h, p),
                "DENIED_PATH",
                `DENIED_PATH: ${at("wd", p)} — path is denied by policy`
              )
            }
            yield* expectAll(
              allFive(h, ".env"),
              "DENIED_PATH",
              "DENIED_PATH: wd:.env — path is denied by policy"
            )
            yield* expectAll(
              allFive(h, ".ssh"),
              "DENIED_PATH",
              "DENIED_PATH: wd:.ssh — path is denied by policy"
            )
            // Hidden is released: an ordinary hidden name is creatable.
            const made = yield* h.create(".hidden.txt", "ok\n")
            expect(made.created).toBe(true)
            expect(fs.readdirSync(root).sort()).toEqual([".hidden.txt", "internal"])
            expect(fs.readdirSync(path.join(root, "internal"))).toEqual([])
          })
      )
    }
  )
})

describe("the workdir root is never mutable", () => {
  it.effect('"", ".", "./", "sub/.." and "a/b/../.." are ROOT_MUTATION_NOT_ALLOWED on all five', () => {
    const root = freshRoot({ "sub/": "" })
    const before = snapshot(root)
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        const revision = revisionAt(root)
        for (const p of ["", ".", "./", "sub/..", "a/b/../..", "sub/../"]) {
          yield* expectAll(
            allFive(h, p, revision),
            "ROOT_MUTATION_NOT_ALLOWED",
            `ROOT_MUTATION_NOT_ALLOWED: ${at("wd", p)} — the workdir root cannot be mutated`
          )
        }
        expect(snapshot(root)).toEqual(before)
      })
    )
  })
})

describe("reserved names are unreachable on every channel", () => {
  const released = (root: string) =>
    rwVars(root, { SERVERFS_ALLOW_HIDDEN: "true", SERVERFS_DISABLE_DEFAULT_DENY: "true" })

  it.effect(
    "create/edit/delete/mkdir/rmdir of reserved names → RESERVED_PATH even with hidden and deny released",
    () => {
      const root = freshRoot({
        ".serverfs-tmp-x": "RESERVED FILE\n",
        "sub/.serverfs-tmp-x/y": "RESERVED CHILD\n",
        ".serverfs-tmp-emptydir/": ""
      })
      const before = snapshot(root)
      return withServer(released(root), (h) =>
        Effect.gen(function* () {
          const targets: ReadonlyArray<readonly [string, string]> = [
            [".serverfs-tmp-x", revisionAt(path.join(root, ".serverfs-tmp-x"))],
            ["sub/.serverfs-tmp-x/y", revisionAt(path.join(root, "sub/.serverfs-tmp-x/y"))],
            ["sub/.serverfs-tmp-x", revisionAt(path.join(root, "sub/.serverfs-tmp-x"))],
            [".serverfs-tmp-emptydir", revisionAt(path.join(root, ".serverfs-tmp-emptydir"))],
            [".serverfs-tmp-", GARBAGE],
            [".serverfs-disabled", GARBAGE],
            ["sub/.serverfs-disabled", GARBAGE]
          ]
          for (const [p, revision] of targets) {
            yield* expectAll(
              allFive(h, p, revision),
              "RESERVED_PATH",
              `RESERVED_PATH: ${at("wd", p)} — path is reserved for ServerFS internals`
            )
            const reads: ReadonlyArray<Effect.Effect<unknown, AnyError>> = [h.read(p), h.stat(p), h.list(p)]
            for (const call of reads) {
              yield* expectCode(
                call,
                "RESERVED_PATH",
                `RESERVED_PATH: ${at("wd", p)} — path is reserved for ServerFS internals`
              )
            }
          }
          expect(snapshot(root)).toEqual(before)
          // The configuration really released hidden and default-deny names.
          yield* h.create(".hidden", "h\n")
          yield* h.create("key.pem", "k\n")
          yield* h.mkdir(".ssh")
        })
      )
    }
  )

  it.effect("after a batch of mutations no temp is left, and planted debris is visible only on disk", () => {
    const root = freshRoot({ "sub/": "" })
    return withServer(released(root), (h) =>
      Effect.gen(function* () {
        // A batch of successful and refused mutations of every kind.
        const a = yield* h.create("a.txt", "alpha NEEDLE-real\n")
        const a2 = yield* h.edit("a.txt", a.revision, [{ old_text: "alpha", new_text: "beta" }])
        yield* h.edit("a.txt", a2.revision, [{ old_text: "beta", new_text: "gamma" }])
        yield* expectCode(h.create("a.txt", "again"), "PATH_ALREADY_EXISTS")
        yield* expectCode(
          h.edit("a.txt", a.revision, [{ old_text: "gamma", new_text: "x" }]),
          "REVISION_CONFLICT"
        )
        const a3 = yield* h.stat("a.txt")
        yield* expectCode(
          h.edit("a.txt", a3.revision, [{ old_text: "absent", new_text: "x" }]),
          "EDIT_CONFLICT"
        )
        const b = yield* h.create("sub/b.txt", "bravo\n")
        yield* h.del("sub/b.txt", b.revision)
        const d = yield* h.mkdir("sub/d")
        yield* h.rmdir("sub/d", d.revision)
        yield* h.mkdir("keep")
        yield* h.create("keep/c.txt", "charlie NEEDLE-real\n")
        yield* expectCode(h.mkdir("keep"), "PATH_ALREADY_EXISTS")
        expect(leftovers(root)).toEqual([])

        // Crash debris, as a SIGKILL between temp creation and publication would leave it.
        fs.writeFileSync(path.join(root, `${TEMP_PREFIX}0123456789abcdef`), "debris NEEDLE-debris\n")
        fs.writeFileSync(path.join(root, `keep/${TEMP_PREFIX}fedcba9876543210`), "debris NEEDLE-debris\n")
        fs.mkdirSync(path.join(root, `sub/${TEMP_PREFIX}dir`))
        fs.writeFileSync(path.join(root, `sub/${TEMP_PREFIX}dir/inner.txt`), "debris NEEDLE-debris\n")
        expect([...leftovers(root)].sort()).toEqual(
          [
            `${TEMP_PREFIX}0123456789abcdef`,
            `keep/${TEMP_PREFIX}fedcba9876543210`,
            `sub/${TEMP_PREFIX}dir`
          ].sort()
        )

        const seen: string[] = []
        for (const dir of ["", "sub", "keep"]) {
          const listing = yield* h.list(dir)
          seen.push(...listing.entries.map((e) => e.path))
        }
        expect(seen.sort()).toEqual(["a.txt", "keep", "keep/c.txt", "sub"])
        for (const pattern of ["*", ".serverfs*", "*.txt", "inner.txt"]) {
          const found = yield* h.find(pattern)
          for (const match of found.matches) expect(match.path).not.toContain(TEMP_PREFIX)
        }
        const found = yield* h.find("*")
        expect(found.matches.map((m) => m.path).sort()).toEqual(["a.txt", "keep/c.txt"])
        const search = yield* h.search("NEEDLE")
        expect(search.matches.map((m) => m.path).sort()).toEqual(["a.txt", "keep/c.txt"])
        const debris = yield* h.search("debris")
        expect(debris.matches).toEqual([])
        for (const p of [
          `${TEMP_PREFIX}0123456789abcdef`,
          `keep/${TEMP_PREFIX}fedcba9876543210`,
          `sub/${TEMP_PREFIX}dir/inner.txt`
        ]) {
          yield* expectCode(h.read(p), "RESERVED_PATH")
          yield* expectCode(h.stat(p), "RESERVED_PATH")
        }
      })
    )
  })
})

describe("create_text_file", () => {
  it.effect("stores content byte for byte and returns the revision stat_file reports", () => {
    const root = freshRoot()
    const contents: ReadonlyArray<readonly [string, string]> = [
      ["crlf.txt", "one\r\ntwo\r\n"],
      ["no-final-newline.txt", "no newline at the end"],
      ["empty.txt", ""],
      ["emoji.txt", "😀 grin, 🇩🇪 flag, e\u0301 combining\n"],
      ["bom.txt", "\uFEFFwith a BOM\n"],
      ["mixed.txt", "lf\ncr\rcrlf\r\n\n\ttab  \n"],
      ["only-newlines.txt", "\n\n\n"]
    ]
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        for (const [name, content] of contents) {
          const made = yield* h.create(name, content)
          const expected = Buffer.from(content, "utf8")
          expect(bytesOf(path.join(root, name))).toEqual(expected)
          expect(made).toEqual({
            workdir: "wd",
            path: name,
            created: true,
            bytes_written: expected.length,
            revision: revisionAt(path.join(root, name))
          })
          const stat = yield* h.stat(name)
          expect(stat.revision).toBe(made.revision)
          expect(stat.size).toBe(expected.length)
        }
        expect(bytesOf(path.join(root, "bom.txt")).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]))
        expect(leftovers(root)).toEqual([])
      })
    )
  })

  it.effect("the output path echoes the caller's string", () => {
    const root = freshRoot({ "sub/": "" })
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        expect((yield* h.create("./echo.txt", "e")).path).toBe("./echo.txt")
        expect((yield* h.create("sub//x/../echo.txt", "e")).path).toBe("sub//x/../echo.txt")
        expect((yield* h.mkdir("sub/./newdir/")).path).toBe("sub/./newdir/")
        expect(fs.readFileSync(path.join(root, "echo.txt"), "utf8")).toBe("e")
        expect(fs.readFileSync(path.join(root, "sub/echo.txt"), "utf8")).toBe("e")
        expect(fs.statSync(path.join(root, "sub/newdir")).isDirectory()).toBe(true)
      })
    )
  })

  it.effect("a created file is 0666 & ~umask and never executable", () => {
    const root = freshRoot()
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        for (const mask of [0o022, 0o027, 0o002, 0o000]) {
          const previous = process.umask(mask)
          try {
            const name = `m${mask.toString(8)}.sh`
            yield* h.create(name, "#!/bin/sh\necho hi\n")
            const mode = fs.statSync(path.join(root, name)).mode & 0o7777
            expect(mode.toString(8)).toBe((0o666 & ~mask).toString(8))
            expect(mode & 0o111).toBe(0)
            expect(fs.statSync(path.join(root, name)).uid).toBe(process.geteuid?.())
          } finally {
            process.umask(previous)
          }
        }
      })
    )
  })

  it.effect(
    "content limits: NUL and lone surrogates are binary; exactly max bytes is fine, one more is too large",
    () => {
      const root = freshRoot()
      return withServer(rwVars(root, { SERVERFS_MAX_WRITE_BYTES: "64" }), (h) =>
        Effect.gen(function* () {
          for (const content of [
            "a\0b",
            "\0",
            "lone high \uD800 surrogate",
            "lone low \uDC00",
            "tail\uD83D"
          ]) {
            yield* expectCode(
              h.create("bin.txt", content),
              "BINARY_CONTENT_NOT_ALLOWED",
              "BINARY_CONTENT_NOT_ALLOWED: wd:bin.txt — text must not contain NUL characters or unpaired surrogates"
            )
          }
          // 32 × "é" is 64 bytes (but 32 characters): the limit counts UTF-8 bytes.
          yield* h.create("exact.txt", "é".repeat(32))
          expect(fs.statSync(path.join(root, "exact.txt")).size).toBe(64)
          yield* h.create("exact-ascii.txt", "x".repeat(64))
          for (const content of ["é".repeat(32) + "a", "x".repeat(65), "😀".repeat(17)]) {
            yield* expectCode(
              h.create("big.txt", content),
              "WRITE_TOO_LARGE",
              "WRITE_TOO_LARGE: wd:big.txt — exceeds the write limit of 64 bytes"
            )
          }
          // A valid surrogate pair is fine.
          yield* h.create("pair.txt", "\uD83D\uDE00")
          expect(bytesOf(path.join(root, "pair.txt"))).toEqual(Buffer.from("😀", "utf8"))
          expect(fs.readdirSync(root).sort()).toEqual(["exact-ascii.txt", "exact.txt", "pair.txt"])
        })
      )
    }
  )

  it.effect("a per-workdir WORKDIR_XX_MAX_WRITE_BYTES override is the limit of that workdir", () => {
    const root = freshRoot()
    return withServer(rwVars(root, { WORKDIR_01_MAX_WRITE_BYTES: "10" }), (h) =>
      Effect.gen(function* () {
        yield* h.create("ten.txt", "0123456789")
        yield* expectCode(h.create("eleven.txt", "0123456789A"), "WRITE_TOO_LARGE")
      })
    )
  })

  it.effect(
    "every existing object type at the target is PATH_ALREADY_EXISTS and left untouched (create, mkdir)",
    () => {
      const root = freshRoot({ "file.txt": "original bytes\n", "dir/child.txt": "child\n", "dir/empty/": "" })
      fs.symlinkSync("file.txt", path.join(root, "link-in"))
      fs.symlinkSync("dir", path.join(root, "link-in-dir"))
      fs.symlinkSync(outside, path.join(root, "link-out"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "link-out-file"))
      fs.symlinkSync("does-not-exist", path.join(root, "broken"))
      mkfifo(path.join(root, "fifo"))
      return Effect.gen(function* () {
        yield* socketAt(path.join(root, "sock"))
        const targets = [
          "file.txt",
          "dir",
          "dir/child.txt",
          "dir/empty",
          "link-in",
          "link-in-dir",
          "link-out",
          "link-out-file",
          "broken",
          "fifo",
          "sock"
        ]
        const before = snapshot(root, false)
        const outsideBefore = snapshot(outside)
        yield* withServer(rwVars(root), (h) =>
          Effect.forEach(targets, (target) =>
            Effect.gen(function* () {
              const text = `PATH_ALREADY_EXISTS: ${at("wd", target)} — path already exists`
              yield* expectCode(h.create(target, "REPLACED?\n"), "PATH_ALREADY_EXISTS", text)
              yield* expectCode(h.mkdir(target), "PATH_ALREADY_EXISTS", text)
            })
          )
        )
        expect(snapshot(root, false)).toEqual(before)
        expect(snapshot(outside)).toEqual(outsideBefore)
        expect(fs.readlinkSync(path.join(root, "link-out"))).toBe(outside)
        expect(leftovers(root)).toEqual([])
      })
    }
  )

  it.effect(
    "a symlinked parent (inside, escaping, broken, upward) → SYMLINK_NOT_ALLOWED, nothing written on either side",
    () => {
      const root = freshRoot({ "real/inner.txt": "inside inner\n", "real/emptydir/": "" })
      fs.symlinkSync("real", path.join(root, "lnk-in"))
      fs.symlinkSync(outside, path.join(root, "lnk-out"))
      fs.symlinkSync("nowhere", path.join(root, "lnk-broken"))
      fs.symlinkSync("..", path.join(root, "real/lnk-up"))
      const before = snapshot(root)
      const outsideBefore = snapshot(outside)
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const inner = revisionAt(path.join(root, "real/inner.txt"))
          const innerEmpty = revisionAt(path.join(root, "real/emptydir"))
          const secret = revisionAt(path.join(outside, "secret.txt"))
          const outsideEmpty = revisionAt(path.join(outside, "emptydir"))
          const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, MutationError>]> = [
            ["lnk-in/new.txt", h.create("lnk-in/new.txt", "x")],
            ["lnk-in/newdir", h.mkdir("lnk-in/newdir")],
            [
              "lnk-in/inner.txt",
              h.edit("lnk-in/inner.txt", inner, [{ old_text: "inside", new_text: "HACKED" }])
            ],
            ["lnk-in/inner.txt", h.del("lnk-in/inner.txt", inner)],
            ["lnk-in/emptydir", h.rmdir("lnk-in/emptydir", innerEmpty)],
            ["lnk-out/new.txt", h.create("lnk-out/new.txt", "x")],
            ["lnk-out/newdir", h.mkdir("lnk-out/newdir")],
            [
              "lnk-out/secret.txt",
              h.edit("lnk-out/secret.txt", secret, [{ old_text: "SECRET", new_text: "HACKED" }])
            ],
            ["lnk-out/secret.txt", h.del("lnk-out/secret.txt", secret)],
            ["lnk-out/emptydir", h.rmdir("lnk-out/emptydir", outsideEmpty)],
            ["lnk-broken/new.txt", h.create("lnk-broken/new.txt", "x")],
            ["lnk-broken/newdir", h.mkdir("lnk-broken/newdir")],
            ["real/lnk-up/new.txt", h.create("real/lnk-up/new.txt", "x")],
            ["real/lnk-up/real/new.txt", h.create("real/lnk-up/real/new.txt", "x")],
            ["real/lnk-up/newdir", h.mkdir("real/lnk-up/newdir")],
            ["lnk-in/deeper/new.txt", h.create("lnk-in/deeper/new.txt", "x")]
          ]
          for (const [p, call] of calls) {
            yield* expectCode(
              call,
              "SYMLINK_NOT_ALLOWED",
              `SYMLINK_NOT_ALLOWED: ${at("wd", p)} — symbolic links are not followed`
            )
          }
          expect(snapshot(root)).toEqual(before)
          expect(snapshot(outside)).toEqual(outsideBefore)
        })
      )
    }
  )

  it.effect(
    "a missing parent is PARENT_NOT_FOUND for create and mkdir, PATH_NOT_FOUND for edit and delete",
    () => {
      const root = freshRoot({ "sub/": "" })
      const before = snapshot(root)
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          for (const p of ["missing/x.txt", "missing/deeper/x.txt", "sub/missing/x"]) {
            const where = at("wd", p)
            yield* expectCode(
              h.create(p, "x"),
              "PARENT_NOT_FOUND",
              `PARENT_NOT_FOUND: ${where} — parent directory does not exist`
            )
            yield* expectCode(
              h.mkdir(p),
              "PARENT_NOT_FOUND",
              `PARENT_NOT_FOUND: ${where} — parent directory does not exist`
            )
            const missing = `PATH_NOT_FOUND: ${where} — no such file or directory`
            yield* expectCode(
              h.edit(p, GARBAGE, [{ old_text: "a", new_text: "b" }]),
              "PATH_NOT_FOUND",
              missing
            )
            yield* expectCode(h.del(p, GARBAGE), "PATH_NOT_FOUND", missing)
            yield* expectCode(h.rmdir(p, GARBAGE), "PATH_NOT_FOUND", missing)
          }
          // A missing target under an existing parent.
          yield* expectCode(
            h.edit("sub/none.txt", GARBAGE, [{ old_text: "a", new_text: "b" }]),
            "PATH_NOT_FOUND"
          )
          yield* expectCode(h.del("sub/none.txt", GARBAGE), "PATH_NOT_FOUND")
          yield* expectCode(h.rmdir("sub/none", GARBAGE), "PATH_NOT_FOUND")
          expect(snapshot(root)).toEqual(before)
        })
      )
    }
  )

  it.effect("a parent that is a file is NOT_A_DIRECTORY on all five", () => {
    const root = freshRoot({ "file.txt": "plain\n" })
    const before = snapshot(root)
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        for (const p of ["file.txt/x", "file.txt/x/y"]) {
          yield* expectAll(
            allFive(h, p),
            "NOT_A_DIRECTORY",
            `NOT_A_DIRECTORY: ${at("wd", p)} — not a directory`
          )
        }
        expect(snapshot(root)).toEqual(before)
      })
    )
  })
})

describe("edit_text_file", () => {
  const editRoot = (files: Readonly<Record<string, string | Buffer>>, extra: Vars = {}) => {
    const root = freshRoot(files)
    return { root, vars: rwVars(root, extra), file: (name: string) => path.join(root, name) }
  }

  it.effect(
    "all or nothing: a failing fifth edit leaves the file byte-identical and its revision unchanged",
    () => {
      const { root, vars, file } = editRoot({ "f.txt": "one two three four five\n" })
      const before = snapshot(root)
      return withServer(vars, (h) =>
        Effect.gen(function* () {
          const revision = revisionAt(file("f.txt"))
          const edits = [
            { old_text: "one", new_text: "1" },
            { old_text: "two", new_text: "2" },
            { old_text: "three", new_text: "3" },
            { old_text: "four", new_text: "4" },
            { old_text: "six", new_text: "6" }
          ]
          yield* expectCode(
            h.edit("f.txt", revision, edits),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:f.txt — edit 5: expected 1 occurrence(s), found 0"
          )
          expect(snapshot(root)).toEqual(before)
          expect(revisionAt(file("f.txt"))).toBe(revision)
          // The same revision still works: nothing moved.
          const done = yield* h.edit("f.txt", revision, edits.slice(0, 4))
          expect(fs.readFileSync(file("f.txt"), "utf8")).toBe("1 2 3 4 five\n")
          expect(done.edits_applied).toBe(4)
          expect(leftovers(root)).toEqual([])
        })
      )
    }
  )

  it.effect(
    "expected_count: absent, too many, exact; all occurrences replaced; non-overlapping counting",
    () => {
      const { vars, file } = editRoot({
        "f.txt": "x x x\n",
        "aaa.txt": "aaa",
        "aaaa.txt": "aaaa",
        "seq.txt": "a-b\n"
      })
      return withServer(vars, (h) =>
        Effect.gen(function* () {
          const r = () => revisionAt(file("f.txt"))
          yield* expectCode(
            h.edit("f.txt", r(), [{ old_text: "y", new_text: "z" }]),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:f.txt — expected 1 occurrence(s), found 0"
          )
          yield* expectCode(
            h.edit("f.txt", r(), [{ old_text: "x", new_text: "z" }]),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:f.txt — expected 1 occurrence(s), found 3"
          )
          yield* expectCode(
            h.edit("f.txt", r(), [{ old_text: "x", new_text: "z", expected_count: 2 }]),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:f.txt — expected 2 occurrence(s), found 3"
          )
          yield* expectCode(
            h.edit("f.txt", r(), [{ old_text: "x", new_text: "z", expected_count: 4 }]),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:f.txt — expected 4 occurrence(s), found 3"
          )
          expect(fs.readFileSync(file("f.txt"), "utf8")).toBe("x x x\n")
          yield* h.edit("f.txt", r(), [{ old_text: "x", new_text: "yy", expected_count: 3 }])
          expect(fs.readFileSync(file("f.txt"), "utf8")).toBe("yy yy yy\n")

          // "aaa" holds one non-overlapping "aa" (not two overlapping ones).
          yield* expectCode(
            h.edit("aaa.txt", revisionAt(file("aaa.txt")), [
              { old_text: "aa", new_text: "b", expected_count: 2 }
            ]),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:aaa.txt — expected 2 occurrence(s), found 1"
          )
          yield* h.edit("aaa.txt", revisionAt(file("aaa.txt")), [{ old_text: "aa", new_text: "b" }])
          expect(fs.readFileSync(file("aaa.txt"), "utf8")).toBe("ba")
          yield* h.edit("aaaa.txt", revisionAt(file("aaaa.txt")), [
            { old_text: "aa", new_text: "b", expected_count: 2 }
          ])
          expect(fs.readFileSync(file("aaaa.txt"), "utf8")).toBe("bb")

          // Edits apply in order to the working text: the second sees the first's result.
          yield* h.edit("seq.txt", revisionAt(file("seq.txt")), [
            { old_text: "a", new_text: "b" },
            { old_text: "b", new_text: "c", expected_count: 2 },
            { old_text: "c-c", new_text: "done" }
          ])
          expect(fs.readFileSync(file("seq.txt"), "utf8")).toBe("done\n")
          // A replacement text that contains the search text is not searched again.
          yield* h.edit("seq.txt", revisionAt(file("seq.txt")), [{ old_text: "done", new_text: "done done" }])
          expect(fs.readFileSync(file("seq.txt"), "utf8")).toBe("done done\n")
        })
      )
    }
  )

  it.effect(
    "an empty old_text fills only an empty file (or a BOM-only file), only with expected_count 1",
    () => {
      const { vars, file } = editRoot({
        "empty.txt": "",
        "empty2.txt": "",
        "bom-only.txt": Buffer.from([0xef, 0xbb, 0xbf]),
        "full.txt": "not empty\n",
        "ws.txt": "\n"
      })
      return withServer(vars, (h) =>
        Effect.gen(function* () {
          const conflict = "an empty old_text only fills an empty file (expected_count 1)"
          yield* expectCode(
            h.edit("full.txt", revisionAt(file("full.txt")), [{ old_text: "", new_text: "x" }]),
            "EDIT_CONFLICT",
            `EDIT_CONFLICT: wd:full.txt — ${conflict}`
          )
          yield* expectCode(
            h.edit("ws.txt", revisionAt(file("ws.txt")), [{ old_text: "", new_text: "x" }]),
            "EDIT_CONFLICT"
          )
          yield* expectCode(
            h.edit("empty2.txt", revisionAt(file("empty2.txt")), [
              { old_text: "", new_text: "x", expected_count: 2 }
            ]),
            "EDIT_CONFLICT",
            `EDIT_CONFLICT: wd:empty2.txt — ${conflict}`
          )
          expect(fs.readFileSync(file("full.txt"), "utf8")).toBe("not empty\n")
          expect(fs.statSync(file("empty2.txt")).size).toBe(0)

          const filled = yield* h.edit("empty.txt", revisionAt(file("empty.txt")), [
            { old_text: "", new_text: "first line\r\nsecond" }
          ])
          expect(bytesOf(file("empty.txt"))).toEqual(Buffer.from("first line\r\nsecond"))
          expect(filled.bytes_before).toBe(0)
          expect(filled.bytes_after).toBe(18)

          yield* h.edit("bom-only.txt", revisionAt(file("bom-only.txt")), [
            { old_text: "", new_text: "after bom\n" }
          ])
          expect(bytesOf(file("bom-only.txt"))).toEqual(
            Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("after bom\n")])
          )
        })
      )
    }
  )

  it.effect(
    "a BOM is kept and hidden from matching; CRLF, missing final newline and other bytes are untouched",
    () => {
      const bom = Buffer.from([0xef, 0xbb, 0xbf])
      const { vars, file } = editRoot({
        "bom.txt": Buffer.concat([bom, Buffer.from("hello\r\nworld")]),
        "crlf.txt": "l1\r\nl2\r\nl3",
        "mixed.txt": "keep\r\n\ttabs  \nand\rcr\n😀 end"
      })
      return withServer(vars, (h) =>
        Effect.gen(function* () {
          // The BOM is not part of the text: it cannot be matched.
          yield* expectCode(
            h.edit("bom.txt", revisionAt(file("bom.txt")), [{ old_text: "\uFEFFhello", new_text: "x" }]),
            "EDIT_CONFLICT",
            "EDIT_CONFLICT: wd:bom.txt — expected 1 occurrence(s), found 0"
          )
          const edited = yield* h.edit("bom.txt", revisionAt(file("bom.txt")), [
            { old_text: "hello", new_text: "bye" }
          ])
          expect(bytesOf(file("bom.txt"))).toEqual(Buffer.concat([bom, Buffer.from("bye\r\nworld")]))
          expect(edited.bytes_before).toBe(15)
          expect(edited.bytes_after).toBe(13)
          // A text that starts where the BOM ends can be replaced; the BOM stays.
          yield* h.edit("bom.txt", revisionAt(file("bom.txt")), [{ old_text: "bye\r\nworld", new_text: "" }])
          expect(bytesOf(file("bom.txt"))).toEqual(bom)

          yield* h.edit("crlf.txt", revisionAt(file("crlf.txt")), [{ old_text: "l2", new_text: "L2" }])
          expect(bytesOf(file("crlf.txt"))).toEqual(Buffer.from("l1\r\nL2\r\nl3"))
          yield* h.edit("crlf.txt", revisionAt(file("crlf.txt")), [
            { old_text: "\r\nl3", new_text: "\r\nl3\r\n" }
          ])
          expect(bytesOf(file("crlf.txt"))).toEqual(Buffer.from("l1\r\nL2\r\nl3\r\n"))

          yield* h.edit("mixed.txt", revisionAt(file("mixed.txt")), [{ old_text: "and", new_text: "AND" }])
          expect(bytesOf(file("mixed.txt"))).toEqual(Buffer.from("keep\r\n\ttabs  \nAND\rcr\n😀 end"))
        })
      )
    }
  )

  it.effect("only the first BOM is hidden: a second one is text and is kept", () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    const { vars, file } = editRoot({ "two.txt": Buffer.concat([bom, bom, Buffer.from("x")]) })
    return withServer(vars, (h) =>
      Effect.gen(function* () {
        yield* h.edit("two.txt", revisionAt(file("two.txt")), [{ old_text: "x", new_text: "y" }])
        expect(bytesOf(file("two.txt"))).toEqual(Buffer.concat([bom, bom, Buffer.from("y")]))
        yield* h.edit("two.txt", revisionAt(file("two.txt")), [{ old_text: "\uFEFFy", new_text: "z" }])
        expect(bytesOf(file("two.txt"))).toEqual(Buffer.concat([bom, Buffer.from("z")]))
      })
    )
  })

  it.effect(
    "a NUL anywhere is BINARY_FILE; invalid UTF-8 is UNSUPPORTED_TEXT_ENCODING; nothing changes",
    () => {
      const late = Buffer.concat([Buffer.from("x".repeat(5000)), Buffer.from([0]), Buffer.from("tail")])
      const { root, vars, file } = editRoot({
        "nul-late.txt": late,
        "nul-start.txt": Buffer.from([0, 0x61]),
        "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
        "truncated.txt": Buffer.from([0x61, 0xe2, 0x82]),
        "ff.txt": Buffer.from([0xff, 0x61]),
        "surrogate.txt": Buffer.from([0xed, 0xa0, 0x80])
      })
      const before = snapshot(root)
      return withServer(vars, (h) =>
        Effect.gen(function* () {
          for (const name of ["nul-late.txt", "nul-start.txt"]) {
            yield* expectCode(
              h.edit(name, revisionAt(file(name)), [{ old_text: "x", new_text: "y", expected_count: 1 }]),
              "BINARY_FILE",
              `BINARY_FILE: wd:${name} — file contains NUL bytes and is treated as binary`
            )
          }
          for (const name of ["latin1.txt", "truncated.txt", "ff.txt", "surrogate.txt"]) {
            yield* expectCode(
              h.edit(name, revisionAt(file(name)), [{ old_text: "a", new_text: "b" }]),
              "UNSUPPORTED_TEXT_ENCODING",
              `UNSUPPORTED_TEXT_ENCODING: wd:${name} — content is not valid UTF-8`
            )
          }
          expect(snapshot(root)).toEqual(before)
        })
      )
    }
  )

  it.effect(
    "limits: file over max, result over max, summed edit texts over max, too many edits, NUL in edits",
    () => {
      const { root, vars, file } = editRoot(
        {
          "over.txt": "x".repeat(65),
          "at-limit.txt": `${"x".repeat(60)}abcd`,
          "grow.txt": `${"y".repeat(60)}ab`,
          "sum.txt": "k".repeat(30)
        },
        { SERVERFS_MAX_WRITE_BYTES: "64", SERVERFS_MAX_EDITS_PER_CALL: "3" }
      )
      const tooLarge = (p: string) => `WRITE_TOO_LARGE: wd:${p} — exceeds the write limit of 64 bytes`
      return withServer(vars, (h) =>
        Effect.gen(function* () {
          const before = snapshot(root)
          yield* expectCode(
            h.edit("over.txt", revisionAt(file("over.txt")), [
              { old_text: "x", new_text: "y", expected_count: 65 }
            ]),
            "WRITE_TOO_LARGE",
            tooLarge("over.txt")
          )
          // The result may not pass the limit either (62 + 3 bytes).
          yield* expectCode(
            h.edit("grow.txt", revisionAt(file("grow.txt")), [{ old_text: "ab", new_text: "abcde" }]),
            "WRITE_TOO_LARGE",
            tooLarge("grow.txt")
          )
          // Summed old_text + new_text over the limit is refused before the file is looked at.
          yield* expectCode(
            h.edit("missing.txt", GARBAGE, [
              { old_text: "a".repeat(30), new_text: "b".repeat(10) },
              { old_text: "c".repeat(20), new_text: "d".repeat(5) }
            ]),
            "WRITE_TOO_LARGE",
            tooLarge("missing.txt")
          )
          yield* expectCode(
            h.edit("missing.txt", GARBAGE, [{ old_text: "é".repeat(16), new_text: "é".repeat(16) + "x" }]),
            "WRITE_TOO_LARGE"
          )
          yield* expectCode(
            h.edit("missing.txt", GARBAGE, [
              { old_text: "a", new_text: "b" },
              { old_text: "a", new_text: "b" },
              { old_text: "a", new_text: "b" },
              { old_text: "a", new_text: "b\0" }
            ]),
            "TOO_MANY_EDITS",
            "TOO_MANY_EDITS: wd:missing.txt — 4 edits exceed the limit of 3 per call"
          )
          for (const edit of [
            { old_text: "a\0", new_text: "b" },
            { old_text: "a", new_text: "\0" },
            { old_text: "a", new_text: "\uDFFF" }
          ]) {
            yield* expectCode(
              h.edit("missing.txt", GARBAGE, [edit]),
              "BINARY_CONTENT_NOT_ALLOWED",
              "BINARY_CONTENT_NOT_ALLOWED: wd:missing.txt — text must not contain NUL characters or unpaired surrogates"
            )
          }
          expect(snapshot(root)).toEqual(before)
          // Exactly at the limit: a 64-byte file, a 64-byte result and 64 summed bytes are accepted.
          yield* h.edit("at-limit.txt", revisionAt(file("at-limit.txt")), [
            { old_text: "abcd", new_text: "ABCD" }
          ])
          expect(fs.readFileSync(file("at-limit.txt"), "utf8")).toBe(`${"x".repeat(60)}ABCD`)
          yield* h.edit("grow.txt", revisionAt(file("grow.txt")), [{ old_text: "ab", new_text: "abcd" }])
          expect(fs.statSync(file("grow.txt")).size).toBe(64)
          // Summed old_text + new_text of exactly 64 bytes is accepted (30 + 34).
          yield* h.edit("sum.txt", revisionAt(file("sum.txt")), [
            { old_text: "k".repeat(30), new_text: "m".repeat(34) }
          ])
          expect(fs.readFileSync(file("sum.txt"), "utf8")).toBe("m".repeat(34))
        })
      )
    }
  )

  it.effect("hard links: edit → MULTIPLE_HARDLINKS_NOT_SUPPORTED, delete_file of one name is allowed", () => {
    const { root, vars, file } = editRoot({ "a.txt": "shared content\n" })
    fs.linkSync(file("a.txt"), file("b.txt"))
    return withServer(vars, (h) =>
      Effect.gen(function* () {
        const before = snapshot(root)
        yield* expectCode(
          h.edit("a.txt", revisionAt(file("a.txt")), [{ old_text: "shared", new_text: "split" }]),
          "MULTIPLE_HARDLINKS_NOT_SUPPORTED",
          "MULTIPLE_HARDLINKS_NOT_SUPPORTED: wd:a.txt — file has more than one hard link; an atomic replace would split it"
        )
        expect(snapshot(root)).toEqual(before)
        // The revision is checked first.
        yield* expectCode(
          h.edit("a.txt", GARBAGE, [{ old_text: "shared", new_text: "split" }]),
          "REVISION_CONFLICT"
        )
        const deleted = yield* h.del("b.txt", revisionAt(file("b.txt")))
        expect(deleted.bytes_deleted).toBe(15)
        expect(fs.existsSync(file("b.txt"))).toBe(false)
        expect(fs.readFileSync(file("a.txt"), "utf8")).toBe("shared content\n")
        // One link left: editable again (with its new revision, as nlink is part of it).
        yield* h.edit("a.txt", revisionAt(file("a.txt")), [{ old_text: "shared", new_text: "own" }])
        expect(fs.readFileSync(file("a.txt"), "utf8")).toBe("own content\n")
      })
    )
  })

  it.effect("a stale, foreign or garbage revision is REVISION_CONFLICT and changes nothing", () => {
    const { root, vars, file } = editRoot({ "f.txt": "version one\n", "other.txt": "version one\n" })
    return withServer(vars, (h) =>
      Effect.gen(function* () {
        const stale = revisionAt(file("f.txt"))
        fs.appendFileSync(file("f.txt"), "appended by someone else\n")
        const before = snapshot(root)
        const conflict = "REVISION_CONFLICT: wd:f.txt — revision does not match; read the file again"
        for (const revision of [
          stale,
          revisionAt(file("other.txt")),
          "garbage",
          "",
          "v1:",
          GARBAGE,
          "V1:ABCDEF0123456789"
        ]) {
          yield* expectCode(
            h.edit("f.txt", revision, [{ old_text: "one", new_text: "two" }]),
            "REVISION_CONFLICT",
            conflict
          )
          yield* expectCode(h.del("f.txt", revision), "REVISION_CONFLICT", conflict)
        }
        expect(snapshot(root)).toEqual(before)
        expect(fs.readFileSync(file("f.txt"), "utf8")).toBe("version one\nappended by someone else\n")
        // A metadata-only change (chmod) also makes a token stale.
        const current = revisionAt(file("f.txt"))
        fs.chmodSync(file("f.txt"), 0o600)
        const chmodded = snapshot(root)
        yield* expectCode(
          h.edit("f.txt", current, [{ old_text: "one", new_text: "two" }]),
          "REVISION_CONFLICT"
        )
        yield* expectCode(h.del("f.txt", current), "REVISION_CONFLICT")
        expect(snapshot(root)).toEqual(chmodded)
      })
    )
  })

  it.effect(
    "create → edit → edit → delete: every returned revision is the next stat/read revision and works at once",
    () => {
      const root = freshRoot()
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const made = yield* h.create("chain.txt", "v0\n")
          expect((yield* h.stat("chain.txt")).revision).toBe(made.revision)
          expect((yield* h.read("chain.txt")).revision).toBe(made.revision)

          const first = yield* h.edit("chain.txt", made.revision, [{ old_text: "v0", new_text: "v1 longer" }])
          expect(first).toEqual({
            workdir: "wd",
            path: "chain.txt",
            edited: true,
            edits_applied: 1,
            bytes_before: 3,
            bytes_after: 10,
            revision_before: made.revision,
            revision: revisionAt(path.join(root, "chain.txt"))
          })
          expect(first.revision).not.toBe(made.revision)
          expect((yield* h.stat("chain.txt")).revision).toBe(first.revision)
          const read = yield* h.read("chain.txt")
          expect(read.revision).toBe(first.revision)
          expect(read.content).toBe("v1 longer\n")

          const second = yield* h.edit("chain.txt", first.revision, [
            { old_text: "v1", new_text: "v2" },
            { old_text: "longer", new_text: "short" }
          ])
          expect(second.edits_applied).toBe(2)
          expect((yield* h.stat("chain.txt")).revision).toBe(second.revision)
          // The superseded token no longer works.
          yield* expectCode(
            h.edit("chain.txt", first.revision, [{ old_text: "v2", new_text: "v3" }]),
            "REVISION_CONFLICT"
          )

          const deleted = yield* h.del("chain.txt", second.revision)
          expect(deleted).toEqual({
            workdir: "wd",
            path: "chain.txt",
            deleted: true,
            bytes_deleted: 9,
            revision_deleted: second.revision
          })
          yield* expectCode(h.stat("chain.txt"), "PATH_NOT_FOUND")
          expect(fs.readdirSync(root)).toEqual([])
        })
      )
    }
  )

  it.effect(
    "the target must be a regular file: directory, symlink, FIFO, socket are refused untouched",
    () => {
      const { root, vars, file } = editRoot({ "dir/": "", "real.txt": "real a\n" })
      fs.symlinkSync("real.txt", file("link.txt"))
      fs.symlinkSync(path.join(outside, "secret.txt"), file("link-out.txt"))
      mkfifo(file("fifo"))
      return Effect.gen(function* () {
        yield* socketAt(file("sock"))
        const before = snapshot(root)
        yield* withServer(vars, (h) =>
          Effect.gen(function* () {
            const e = [{ old_text: "a", new_text: "b" }]
            yield* expectCode(
              h.edit("dir", revisionAt(file("dir")), e),
              "NOT_A_FILE",
              "NOT_A_FILE: wd:dir — is a directory"
            )
            for (const [name, target] of [
              ["link.txt", "real.txt"],
              ["link-out.txt", path.join(outside, "secret.txt")]
            ] as const) {
              yield* expectCode(
                h.edit(name, revisionAt(file(name)), e),
                "SYMLINK_NOT_ALLOWED",
                `SYMLINK_NOT_ALLOWED: wd:${name} — symbolic links are not followed`
              )
              // Not even the target's revision gets through the link.
              yield* expectCode(
                h.edit(name, revisionAt(target.startsWith("/") ? target : file(target)), e),
                "SYMLINK_NOT_ALLOWED"
              )
            }
            for (const name of ["fifo", "sock"]) {
              yield* expectCode(
                h.edit(name, revisionAt(file(name)), e),
                "UNSUPPORTED_FILE_TYPE",
                `UNSUPPORTED_FILE_TYPE: wd:${name} — not a regular file (FIFO, socket or device)`
              )
            }
          })
        )
        expect(snapshot(root)).toEqual(before)
      })
    }
  )
})

describe("delete_file", () => {
  it.effect(
    "regular files only: directory, symlink (kept), FIFO, socket refused; binary and oversized deletable",
    () => {
      const root = freshRoot({
        "dir/": "",
        "binary.bin": Buffer.from([0, 1, 2, 0xff, 0xfe, 0]),
        "huge.txt": "h".repeat(200),
        "real.txt": "real\n"
      })
      fs.symlinkSync("real.txt", path.join(root, "link"))
      fs.symlinkSync(outside, path.join(root, "link-out"))
      mkfifo(path.join(root, "fifo"))
      return Effect.gen(function* () {
        yield* socketAt(path.join(root, "sock"))
        yield* withServer(rwVars(root, { SERVERFS_MAX_WRITE_BYTES: "64" }), (h) =>
          Effect.gen(function* () {
            const before = snapshot(root)
            const r = (name: string) => revisionAt(path.join(root, name))
            yield* expectCode(h.del("dir", r("dir")), "NOT_A_FILE", "NOT_A_FILE: wd:dir — is a directory")
            for (const name of ["link", "link-out"]) {
              yield* expectCode(
                h.del(name, r(name)),
                "SYMLINK_NOT_ALLOWED",
                `SYMLINK_NOT_ALLOWED: wd:${name} — symbolic links are not followed`
              )
            }
            yield* expectCode(h.del("link", r("real.txt")), "SYMLINK_NOT_ALLOWED")
            for (const name of ["fifo", "sock"]) {
              yield* expectCode(
                h.del(name, r(name)),
                "UNSUPPORTED_FILE_TYPE",
                `UNSUPPORTED_FILE_TYPE: wd:${name} — not a regular file (FIFO, socket or device)`
              )
            }
            expect(snapshot(root)).toEqual(before)
            expect(fs.readlinkSync(path.join(root, "link"))).toBe("real.txt")

            const revision = r("binary.bin")
            const binary = yield* h.del("binary.bin", revision)
            expect(binary).toEqual({
              workdir: "wd",
              path: "binary.bin",
              deleted: true,
              bytes_deleted: 6,
              revision_deleted: revision
            })
            // No size limit on deletion (200 bytes > the 64-byte write limit).
            const huge = yield* h.del("huge.txt", r("huge.txt"))
            expect(huge.bytes_deleted).toBe(200)
            expect(fs.existsSync(path.join(root, "binary.bin"))).toBe(false)
            expect(fs.existsSync(path.join(root, "huge.txt"))).toBe(false)
            yield* expectCode(h.del("binary.bin", revision), "PATH_NOT_FOUND")
          })
        )
      })
    }
  )

  it.effect.skipIf(seteuidSkipped)(
    "a file the server cannot read → ACCESS_DENIED even though unlink would be allowed",
    () => {
      const root = freshRoot({ "shared/secret.txt": "cannot read me\n", "shared/open.txt": "readable\n" })
      fs.chmodSync(path.join(root, "shared"), 0o777)
      fs.chmodSync(path.join(root, "shared/secret.txt"), 0o000)
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const secret = revisionAt(path.join(root, "shared/secret.txt"))
          const open = revisionAt(path.join(root, "shared/open.txt"))
          yield* asUserEffect(
            65534,
            65534,
            Effect.gen(function* () {
              yield* expectCode(
                h.del("shared/secret.txt", secret),
                "ACCESS_DENIED",
                "ACCESS_DENIED: wd:shared/secret.txt — access denied (permission denied)"
              )
              // Control: the same user in the same directory may unlink a file it can read.
              const deleted = yield* h.del("shared/open.txt", open)
              expect(deleted.deleted).toBe(true)
            })
          )
          expect(process.geteuid?.()).toBe(0)
          expect(fs.readdirSync(path.join(root, "shared"))).toEqual(["secret.txt"])
          expect(revisionAt(path.join(root, "shared/secret.txt"))).toBe(secret)
        })
      )
    }
  )
})

describe("OS failures use the mutation mapping (tool-contracts §0)", () => {
  it.effect.skipIf(seteuidSkipped)(
    "a permission refusal is ACCESS_DENIED (permission denied) on all five",
    () => {
      const root = freshRoot({
        "closed/file.txt": "a\n",
        "closed/dir/": "",
        "private/inner.txt": "x",
        "sticky/": ""
      })
      fs.chmodSync(path.join(root, "closed/file.txt"), 0o666)
      fs.chmodSync(path.join(root, "private"), 0o700)
      fs.chmodSync(path.join(root, "sticky"), 0o1777)
      fs.writeFileSync(path.join(root, "sticky/theirs.txt"), "root's\n")
      fs.chmodSync(path.join(root, "sticky/theirs.txt"), 0o644)
      const before = snapshot(root)
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const denied = (p: string) => `ACCESS_DENIED: wd:${p} — access denied (permission denied)`
          const file = revisionAt(path.join(root, "closed/file.txt"))
          const dir = revisionAt(path.join(root, "closed/dir"))
          const theirs = revisionAt(path.join(root, "sticky/theirs.txt"))
          yield* asUserEffect(
            65534,
            65534,
            Effect.gen(function* () {
              // A directory the process may not write (0755, owned by root).
              yield* expectCode(h.create("closed/new.txt", "x"), "ACCESS_DENIED", denied("closed/new.txt"))
              yield* expectCode(
                h.edit("closed/file.txt", file, [{ old_text: "a", new_text: "b" }]),
                "ACCESS_DENIED",
                denied("closed/file.txt")
              )
              yield* expectCode(h.del("closed/file.txt", file), "ACCESS_DENIED", denied("closed/file.txt"))
              yield* expectCode(h.mkdir("closed/newdir"), "ACCESS_DENIED", denied("closed/newdir"))
              yield* expectCode(h.rmdir("closed/dir", dir), "ACCESS_DENIED", denied("closed/dir"))
              // A directory the process may not even search (0700).
              yield* expectCode(h.create("private/new.txt", "x"), "ACCESS_DENIED", denied("private/new.txt"))
              yield* expectCode(
                h.del("private/inner.txt", GARBAGE),
                "ACCESS_DENIED",
                denied("private/inner.txt")
              )
              // EPERM (a sticky directory protects another user's file) is a permission refusal too.
              yield* expectCode(
                h.del("sticky/theirs.txt", theirs),
                "ACCESS_DENIED",
                denied("sticky/theirs.txt")
              )
            })
          )
          expect(snapshot(root)).toEqual(before)
          expect(leftovers(root)).toEqual([])
        })
      )
    }
  )

  it.effect("any other OS failure is MUTATION_IO_ERROR on all five (a name longer than NAME_MAX)", () => {
    const root = freshRoot()
    const long = "n".repeat(300)
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        for (const p of [long, `${long}/x.txt`]) {
          yield* expectAll(
            allFive(h, p),
            "MUTATION_IO_ERROR",
            `MUTATION_IO_ERROR: ${location("wd", p)} — the operation failed (name too long)`
          )
        }
        expect(fs.readdirSync(root)).toEqual([])
      })
    )
  })
})

describe("create_directory", () => {
  it.effect("one level, never recursive; mode 0777 & ~umask; the revision equals stat_file's", () => {
    const root = freshRoot()
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        yield* expectCode(h.mkdir("a/b"), "PARENT_NOT_FOUND")
        expect(fs.existsSync(path.join(root, "a"))).toBe(false)
        const a = yield* h.mkdir("a")
        expect(a).toEqual({
          workdir: "wd",
          path: "a",
          created: true,
          revision: revisionAt(path.join(root, "a"))
        })
        expect((yield* h.stat("a")).revision).toBe(a.revision)
        expect((fs.statSync(path.join(root, "a")).mode & 0o7777).toString(8)).toBe(
          (0o777 & ~process.umask()).toString(8)
        )
        const b = yield* h.mkdir("a/b")
        expect((yield* h.stat("a/b")).revision).toBe(b.revision)
        expect((yield* h.list("a/b")).entries).toEqual([])
        // Creating a child changed the parent's revision, as the contract requires.
        expect((yield* h.stat("a")).revision).not.toBe(a.revision)
        // A repeat performs no second mutation.
        const parent = revisionAt(path.join(root, "a"))
        yield* expectCode(
          h.mkdir("a/b"),
          "PATH_ALREADY_EXISTS",
          "PATH_ALREADY_EXISTS: wd:a/b — path already exists"
        )
        expect(revisionAt(path.join(root, "a"))).toBe(parent)
        expect(revisionAt(path.join(root, "a/b"))).toBe(b.revision)
      })
    )
  })

  it.effect("a setgid parent passes its bit on (the kernel's inheritance is kept)", () => {
    const root = freshRoot({ "shared/": "" })
    fs.chmodSync(path.join(root, "shared"), 0o2775)
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        yield* h.mkdir("shared/team")
        const mode = fs.statSync(path.join(root, "shared/team")).mode & 0o7777
        expect(mode & 0o2000).toBe(0o2000)
        expect(mode & 0o5000).toBe(0)
        yield* h.mkdir("plain")
        expect(fs.statSync(path.join(root, "plain")).mode & 0o7000).toBe(0)
      })
    )
  })
})

describe("delete_directory", () => {
  it.effect(
    "empty only; the revision is checked before emptiness; any child counts and is never named",
    () => {
      const root = freshRoot({
        "d-hidden/.hidden": "h",
        "d-denied/secret.pem": "k",
        "d-reserved/.serverfs-tmp-0123456789abcdef": "t",
        "d-subdir/child/": "",
        "d-raw/": "",
        "empty/": ""
      })
      fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/d-raw/`), Buffer.from([0xff, 0xfe, 0x41])]), "raw")
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const before = snapshot(root)
          const children = [".hidden", "secret.pem", ".serverfs-tmp", "child", "\uFFFD", "ÿ"]
          for (const dir of ["d-hidden", "d-denied", "d-reserved", "d-subdir", "d-raw"]) {
            yield* expectCode(
              h.rmdir(dir, GARBAGE),
              "REVISION_CONFLICT",
              `REVISION_CONFLICT: wd:${dir} — revision does not match; read the file again`
            )
            const error = yield* expectCode(
              h.rmdir(dir, revisionAt(path.join(root, dir))),
              "DIRECTORY_NOT_EMPTY",
              `DIRECTORY_NOT_EMPTY: wd:${dir} — directory is not empty`
            )
            for (const child of children) expect(error.message).not.toContain(child)
          }
          expect(snapshot(root)).toEqual(before)

          const revision = revisionAt(path.join(root, "empty"))
          const deleted = yield* h.rmdir("empty", revision)
          expect(deleted).toEqual({ workdir: "wd", path: "empty", deleted: true, revision_deleted: revision })
          expect(fs.existsSync(path.join(root, "empty"))).toBe(false)
          yield* expectCode(h.rmdir("empty", revision), "PATH_NOT_FOUND")
        })
      )
    }
  )

  it.effect("adding and then removing a child changes the directory's revision", () => {
    const root = freshRoot({ "d/": "" })
    const dir = path.join(root, "d")
    // Old times make the change visible whatever the timestamp granularity.
    fs.utimesSync(dir, new Date(1_000_000_000_000), new Date(1_000_000_000_000))
    return withServer(rwVars(root), (h) =>
      Effect.gen(function* () {
        const old = (yield* h.stat("d")).revision
        const child = yield* h.create("d/tmp.txt", "x")
        yield* h.del("d/tmp.txt", child.revision)
        expect(fs.readdirSync(dir)).toEqual([])
        yield* expectCode(h.rmdir("d", old), "REVISION_CONFLICT")
        expect(fs.existsSync(dir)).toBe(true)
        const fresh = (yield* h.stat("d")).revision
        expect(fresh).not.toBe(old)
        yield* h.rmdir("d", fresh)
        expect(fs.existsSync(dir)).toBe(false)
      })
    )
  })

  it.effect(
    "a file → NOT_A_DIRECTORY, a symlink → SYMLINK_NOT_ALLOWED (kept), missing → PATH_NOT_FOUND",
    () => {
      const root = freshRoot({ "file.txt": "f", "real/": "" })
      fs.symlinkSync("real", path.join(root, "link"))
      fs.symlinkSync(path.join(outside, "emptydir"), path.join(root, "link-out"))
      return withServer(rwVars(root), (h) =>
        Effect.gen(function* () {
          const before = snapshot(root)
          const outsideBefore = snapshot(outside)
          yield* expectCode(
            h.rmdir("file.txt", revisionAt(path.join(root, "file.txt"))),
            "NOT_A_DIRECTORY",
            "NOT_A_DIRECTORY: wd:file.txt — not a directory"
          )
          for (const [name, target] of [
            ["link", path.join(root, "real")],
            ["link-out", path.join(outside, "emptydir")]
          ] as const) {
            for (const revision of [revisionAt(path.join(root, name)), revisionAt(target)]) {
              yield* expectCode(
                h.rmdir(name, revision),
                "SYMLINK_NOT_ALLOWED",
                `SYMLINK_NOT_ALLOWED: wd:${name} — symbolic links are not followed`
              )
            }
          }
          yield* expectCode(
            h.rmdir("none", GARBAGE),
            "PATH_NOT_FOUND",
            "PATH_NOT_FOUND: wd:none — no such file or directory"
          )
          expect(snapshot(root)).toEqual(before)
          expect(snapshot(outside)).toEqual(outsideBefore)
        })
      )
    }
  )
})
