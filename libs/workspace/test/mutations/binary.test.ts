/**
 * The two binary tools (tool-contracts §2.12–§2.13), in-process against the service graph the
 * MCP server uses: every error code and its order, strict base64, the encoded-length pre-check,
 * create vs revision-guarded replace (type before revision, hard links, metadata kept), a
 * concurrent reader, the file source through the FileIngress port, and the path attack matrix
 * of the text tools. A refusal writes nothing.
 */
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { FileIngressFailed } from "@serverfs/domain"
import { AT, close, fgetxattr, fsetxattr, O, openat } from "@serverfs/posix"
import { Effect, Layer } from "effect"
import { FileIngress, isStrictBase64, maxEncodedLength } from "../../src/index.js"
import {
  type AnyError,
  type Api,
  asUserEffect,
  expectCode,
  leftovers,
  makeBase,
  mkfifo,
  removeBase,
  revisionAt,
  snapshot,
  type Vars,
  withServer
} from "./fixtures/harness.js"
import { holdLease } from "./fixtures/processes.js"

let base = ""
let counter = 0
let outside = ""

beforeAll(() => {
  base = makeBase("serverfs-binary-")
  outside = path.join(base, "outside")
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.bin"), "OUTSIDE")
})
afterAll(() => removeBase(base))

// The 8-byte PNG signature and a minimal IHDR start: enough for a MIME test and a round trip.
const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex")
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64")

const freshRoot = (files: Readonly<Record<string, string | Buffer>> = {}): string => {
  const root = path.join(base, `wd${counter++}`)
  fs.mkdirSync(root)
  for (const [name, content] of Object.entries(files)) {
    const at = path.join(root, name)
    if (name.endsWith("/")) fs.mkdirSync(at, { recursive: true })
    else {
      fs.mkdirSync(path.dirname(at), { recursive: true })
      fs.writeFileSync(at, content)
    }
  }
  return root
}

/** `wd` read-write with binary transfer, plus `ro` (read-only, binary) and `plain` (rw, no binary). */
const vars = (root: string, extra: Vars = {}): Vars => ({
  WORKDIR_01_ALIAS: "wd",
  WORKDIR_01_PATH: root,
  WORKDIR_01_READ_ONLY: "false",
  WORKDIR_01_BINARY_TRANSFER_ENABLED: "true",
  ...extra
})

const run = <A, E>(root: string, body: (h: Api) => Effect.Effect<A, E>, extra: Vars = {}) =>
  withServer(vars(root, extra), body)

/** The call must fail with `code` and leave the workdir exactly as it was. */
const refused = <A, E extends AnyError>(root: string, call: Effect.Effect<A, E>, code: string) =>
  Effect.gen(function* () {
    const before = snapshot(root)
    yield* expectCode(call, code)
    expect(snapshot(root)).toEqual(before)
  })

describe("strict base64 (pure)", () => {
  it.each([
    ["", true],
    ["YQ==", true],
    ["YWI=", true],
    ["YWJj", true],
    ["***", false],
    ["YQ=", false],
    ["Y Q==", false],
    ["YQ==\n", false],
    ["你好", false],
    ["YWJj\u00e9===", false],
    ["=YQ=", false],
    ["YQ=a", false],
    ["Y===", false],
    ["YWJj-_==", false]
  ])("%j → %s", (text, ok) => {
    expect(isStrictBase64(text)).toBe(ok)
  })

  it("the encoded-length bound is 4·ceil(max/3)", () => {
    expect([1, 2, 3, 4, 8388608].map(maxEncodedLength)).toEqual([4, 4, 4, 8, 11184812])
  })
})

describe("download_binary_file", () => {
  it.effect("a PNG → one blob with size, image/png, sha256 and the stat revision", () => {
    const root = freshRoot({ "img/a b.png": PNG, "t.txt": "hello\n" })
    return run(root, (h) =>
      Effect.gen(function* () {
        const got = yield* h.download("img/a b.png")
        expect(got.bytes.equals(PNG)).toBe(true)
        expect(got.metadata).toEqual({
          workdir: "wd",
          path: "img/a b.png",
          size: PNG.length,
          mime_type: "image/png",
          sha256: sha(PNG),
          revision: revisionAt(path.join(root, "img/a b.png"))
        })
        expect((yield* h.download("t.txt")).metadata.mime_type).toBe("text/plain")
      })
    )
  })

  it.effect("exactly max_binary_transfer_bytes is fine; one byte more → BINARY_FILE_TOO_LARGE", () => {
    const root = freshRoot({ "ok.bin": Buffer.alloc(16, 1), "big.bin": Buffer.alloc(17, 1) })
    return run(
      root,
      (h) =>
        Effect.gen(function* () {
          expect((yield* h.download("ok.bin")).metadata.size).toBe(16)
          yield* expectCode(
            h.download("big.bin"),
            "BINARY_FILE_TOO_LARGE",
            "BINARY_FILE_TOO_LARGE: wd:big.bin — file exceeds 16 bytes"
          )
        }),
      { WORKDIR_01_MAX_BINARY_TRANSFER_BYTES: "16" }
    )
  })

  it.effect(
    "a file whose base64 cannot fit SERVERFS_MAX_RESPONSE_BYTES → RESPONSE_TOO_LARGE before reading",
    () => {
      // 64 KiB budget (the minimum): 30 KiB encodes to 40 KiB and fits with the envelope room;
      // 40 KiB encodes to 53.4 KiB and, with it, does not.
      const root = freshRoot({
        "fits.bin": Buffer.alloc(30 * 1024, 7),
        "big.bin": Buffer.alloc(40 * 1024, 7)
      })
      return run(
        root,
        (h) =>
          Effect.gen(function* () {
            expect((yield* h.download("fits.bin")).metadata.size).toBe(30 * 1024)
            const refusal = yield* expectCode(h.download("big.bin"), "RESPONSE_TOO_LARGE")
            expect(refusal.message).toContain(
              "wd:big.bin (40960 bytes) exceeds the response budget of 65536 bytes"
            )
          }),
        { SERVERFS_MAX_RESPONSE_BYTES: "65536" }
      )
    }
  )

  it.effect("a workdir without binary transfer → BINARY_TRANSFER_DISABLED (before the path policy)", () => {
    const root = freshRoot({ "a.bin": "x" })
    return run(
      root,
      (h) =>
        Effect.gen(function* () {
          yield* expectCode(h.download("a.bin", "plain"), "BINARY_TRANSFER_DISABLED")
          yield* expectCode(h.download(".env", "plain"), "BINARY_TRANSFER_DISABLED")
          yield* expectCode(h.download("a.bin", "nope"), "WORKDIR_NOT_FOUND")
          // A read-only workdir may download.
          expect((yield* h.download("a.bin", "ro")).metadata.size).toBe(1)
        }),
      {
        WORKDIR_02_ALIAS: "plain",
        WORKDIR_02_PATH: freshRoot({ "a.bin": "x" }),
        WORKDIR_03_ALIAS: "ro",
        WORKDIR_03_PATH: freshRoot({ "a.bin": "x" }),
        WORKDIR_03_BINARY_TRANSFER_ENABLED: "true"
      }
    )
  })

  it.effect("directory, root → NOT_A_FILE; missing → PATH_NOT_FOUND; FIFO → UNSUPPORTED_FILE_TYPE", () => {
    const root = freshRoot({ "dir/": "" })
    mkfifo(path.join(root, "fifo"))
    return run(root, (h) =>
      Effect.gen(function* () {
        yield* expectCode(h.download("dir"), "NOT_A_FILE")
        yield* expectCode(h.download(""), "NOT_A_FILE")
        yield* expectCode(h.download("none.bin"), "PATH_NOT_FOUND")
        yield* expectCode(h.download("fifo"), "UNSUPPORTED_FILE_TYPE")
      })
    )
  })
})

describe("upload_binary_file: the order of the checks", () => {
  it.effect("WORKDIR_READ_ONLY comes first, even before BINARY_TRANSFER_DISABLED and the path policy", () => {
    const root = freshRoot()
    const [plain, ro, roplain] = [freshRoot(), freshRoot(), freshRoot()]
    return run(
      root,
      (h) =>
        Effect.gen(function* () {
          yield* refused(ro, h.upload(".env", {}, "ro"), "WORKDIR_READ_ONLY")
          yield* refused(roplain, h.upload(".env", {}, "roplain"), "WORKDIR_READ_ONLY")
          yield* refused(plain, h.upload(".env", {}, "plain"), "BINARY_TRANSFER_DISABLED")
          yield* refused(root, h.upload("x", { data_base64: "" }, "nope"), "WORKDIR_NOT_FOUND")
        }),
      {
        WORKDIR_02_ALIAS: "plain",
        WORKDIR_02_PATH: plain,
        WORKDIR_02_READ_ONLY: "false",
        WORKDIR_03_ALIAS: "ro",
        WORKDIR_03_PATH: ro,
        WORKDIR_03_BINARY_TRANSFER_ENABLED: "true",
        WORKDIR_04_ALIAS: "roplain",
        WORKDIR_04_PATH: roplain
      }
    )
  })

  it.effect(
    "path policy → ROOT_MUTATION_NOT_ALLOWED → revision rules → source rules → FILE_INGRESS_DISABLED",
    () => {
      const root = freshRoot()
      return run(root, (h) =>
        Effect.gen(function* () {
          // Every argument is wrong: the earliest rule decides.
          const wrong = { data_base64: "***", overwrite: true }
          yield* refused(root, h.upload("../x", wrong), "PATH_OUTSIDE_WORKDIR")
          yield* refused(root, h.upload(".serverfs-tmp-x", wrong), "RESERVED_PATH")
          yield* refused(root, h.upload(".hidden", wrong), "HIDDEN_PATH_NOT_ALLOWED")
          yield* refused(root, h.upload("k.pem", wrong), "DENIED_PATH")
          yield* refused(root, h.upload("", wrong), "ROOT_MUTATION_NOT_ALLOWED")
          yield* refused(root, h.upload(".", wrong), "ROOT_MUTATION_NOT_ALLOWED")
          yield* refused(root, h.upload("a.bin", wrong), "EXPECTED_REVISION_REQUIRED")
          yield* refused(
            root,
            h.upload("a.bin", { data_base64: "***", expected_revision: "v1:0000000000000000" }),
            "EXPECTED_REVISION_NOT_ALLOWED"
          )
          yield* refused(root, h.upload("a.bin", {}), "BINARY_SOURCE_REQUIRED")
          const file = { download_url: "https://files.example/x", file_id: "file-1" }
          yield* refused(root, h.upload("a.bin", { data_base64: "***", file }), "BINARY_SOURCE_CONFLICT")
          yield* refused(root, h.upload("a.bin", { file }), "FILE_INGRESS_DISABLED")
        })
      )
    }
  )

  it.effect(
    "base64: ***, YQ=, Y Q==, non-ASCII → INVALID_BASE64; too long → BINARY_PAYLOAD_TOO_LARGE first",
    () => {
      const root = freshRoot()
      return run(
        root,
        (h) =>
          Effect.gen(function* () {
            for (const bad of ["***", "YQ=", "Y Q==", "你好", "YQ==\n", "YWJj-_=="]) {
              yield* refused(root, h.upload("a.bin", { data_base64: bad }), "INVALID_BASE64")
            }
            // max 4 → at most 8 encoded characters: 9 of garbage is too large, never "invalid".
            yield* refused(root, h.upload("a.bin", { data_base64: "*********" }), "BINARY_PAYLOAD_TOO_LARGE")
            // 8 characters that decode to 5 bytes: within the encoded bound, over the decoded one.
            yield* refused(root, h.upload("a.bin", { data_base64: b64("12345") }), "BINARY_PAYLOAD_TOO_LARGE")
            const four = yield* h.upload("a.bin", { data_base64: b64("1234") })
            expect(four.bytes_written).toBe(4)
            const empty = yield* h.upload("empty.bin", { data_base64: "" })
            expect([empty.bytes_written, empty.sha256]).toEqual([0, sha(Buffer.alloc(0))])
            expect(fs.readFileSync(path.join(root, "empty.bin")).length).toBe(0)
          }),
        { WORKDIR_01_MAX_BINARY_TRANSFER_BYTES: "4" }
      )
    }
  )
})

describe("upload_binary_file: create", () => {
  it.effect("new file → created, no execute bits, sha256 and a revision equal to the next stat", () => {
    const root = freshRoot({ "img/": "" })
    return run(root, (h) =>
      Effect.gen(function* () {
        const out = yield* h.upload("img/p.png", { data_base64: b64(PNG) })
        const file = path.join(root, "img/p.png")
        expect(out).toEqual({
          workdir: "wd",
          path: "img/p.png",
          created: true,
          replaced: false,
          bytes_written: PNG.length,
          sha256: sha(PNG),
          revision_before: null,
          revision: revisionAt(file)
        })
        expect(fs.readFileSync(file).equals(PNG)).toBe(true)
        expect(fs.statSync(file).mode & 0o111).toBe(0)
        expect((yield* h.download("img/p.png")).metadata.sha256).toBe(out.sha256)
        expect(leftovers(root)).toEqual([])
      })
    )
  })

  it.effect(
    "anything at the target → PATH_ALREADY_EXISTS; missing parent → PARENT_NOT_FOUND; file parent → NOT_A_DIRECTORY",
    () => {
      const root = freshRoot({ "f.bin": "old", "d/": "" })
      fs.symlinkSync("f.bin", path.join(root, "link"))
      fs.symlinkSync("nowhere", path.join(root, "broken"))
      return run(root, (h) =>
        Effect.gen(function* () {
          for (const taken of ["f.bin", "d", "link", "broken"]) {
            yield* refused(root, h.upload(taken, { data_base64: b64("new") }), "PATH_ALREADY_EXISTS")
          }
          yield* refused(root, h.upload("missing/x.bin", { data_base64: "" }), "PARENT_NOT_FOUND")
          yield* refused(root, h.upload("f.bin/x.bin", { data_base64: "" }), "NOT_A_DIRECTORY")
        })
      )
    }
  )
})

describe("upload_binary_file: replace", () => {
  it.effect(
    "missing → PATH_NOT_FOUND; a directory → NOT_A_FILE even with a garbage revision (type before revision)",
    () => {
      const root = freshRoot({ "d/": "" })
      fs.symlinkSync("d", path.join(root, "link"))
      mkfifo(path.join(root, "fifo"))
      return run(root, (h) =>
        Effect.gen(function* () {
          const replace = { data_base64: b64("x"), overwrite: true, expected_revision: "garbage" }
          yield* refused(root, h.upload("none.bin", replace), "PATH_NOT_FOUND")
          yield* refused(root, h.upload("missing/none.bin", replace), "PATH_NOT_FOUND")
          yield* refused(root, h.upload("d", replace), "NOT_A_FILE")
          yield* refused(root, h.upload("link", replace), "SYMLINK_NOT_ALLOWED")
          yield* refused(root, h.upload("fifo", replace), "UNSUPPORTED_FILE_TYPE")
        })
      )
    }
  )

  it.effect(
    "stale revision → REVISION_CONFLICT; hard link → MULTIPLE_HARDLINKS_NOT_SUPPORTED (after the revision)",
    () => {
      const root = freshRoot({ "f.bin": "old", "h1.bin": "linked" })
      fs.linkSync(path.join(root, "h1.bin"), path.join(root, "h2.bin"))
      return run(root, (h) =>
        Effect.gen(function* () {
          const data = { data_base64: b64("new"), overwrite: true }
          yield* refused(
            root,
            h.upload("f.bin", { ...data, expected_revision: "v1:0000000000000000" }),
            "REVISION_CONFLICT"
          )
          yield* refused(
            root,
            h.upload("h1.bin", { ...data, expected_revision: "v1:0000000000000000" }),
            "REVISION_CONFLICT"
          )
          const rev = revisionAt(path.join(root, "h1.bin"))
          yield* refused(
            root,
            h.upload("h1.bin", { ...data, expected_revision: rev }),
            "MULTIPLE_HARDLINKS_NOT_SUPPORTED"
          )
        })
      )
    }
  )

  it.effect("replace keeps mode and xattrs, returns revision_before and the new revision", () => {
    const root = freshRoot({ "f.bin": "old bytes" })
    const file = path.join(root, "f.bin")
    fs.chmodSync(file, 0o640)
    const fd = openat(AT.FDCWD, file, O.RDONLY)
    let xattrs = true
    try {
      fsetxattr(fd, "user.serverfs-test", Buffer.from("kept"), 0)
    } catch {
      xattrs = false // tmpfs without user xattrs: mode is still checked
    } finally {
      close(fd)
    }
    return run(root, (h) =>
      Effect.gen(function* () {
        const before = revisionAt(file)
        const inode = fs.statSync(file).ino
        const out = yield* h.upload("f.bin", {
          data_base64: b64(PNG),
          overwrite: true,
          expected_revision: before
        })
        expect(out).toEqual({
          workdir: "wd",
          path: "f.bin",
          created: false,
          replaced: true,
          bytes_written: PNG.length,
          sha256: sha(PNG),
          revision_before: before,
          revision: revisionAt(file)
        })
        expect(fs.readFileSync(file).equals(PNG)).toBe(true)
        expect(fs.statSync(file).mode & 0o7777).toBe(0o640)
        expect(fs.statSync(file).ino).not.toBe(inode) // a new inode, renamed into place
        if (xattrs) {
          const after = openat(AT.FDCWD, file, O.RDONLY)
          try {
            expect(fgetxattr(after, "user.serverfs-test").toString()).toBe("kept")
          } finally {
            close(after)
          }
        }
        expect(leftovers(root)).toEqual([])
        // The returned revision is usable at once.
        const again = yield* h.upload("f.bin", {
          data_base64: "",
          overwrite: true,
          expected_revision: out.revision
        })
        expect(again.bytes_written).toBe(0)
      })
    )
  })

  it.live("a concurrent reader sees the old or the new bytes, never a mix", () => {
    const size = 1024 * 1024
    const root = freshRoot({ "f.bin": Buffer.alloc(size, 0x61) })
    const file = path.join(root, "f.bin")
    const olds = sha(Buffer.alloc(size, 0x61))
    const news = sha(Buffer.alloc(size, 0x62))
    return run(
      root,
      (h) =>
        Effect.gen(function* () {
          let writes = 0
          const writer = Effect.gen(function* () {
            for (let i = 0; i < 10; i++) {
              const fill = i % 2 === 0 ? 0x62 : 0x61
              yield* h.upload("f.bin", {
                data_base64: Buffer.alloc(size, fill).toString("base64"),
                overwrite: true,
                expected_revision: revisionAt(file)
              })
              writes++
            }
          })
          const seen = new Set<string>()
          const reader = Effect.gen(function* () {
            for (let i = 0; i < 30; i++) {
              const got = yield* Effect.either(h.download("f.bin"))
              if (got._tag === "Right")
                seen.add(
                  got.right.metadata.sha256 === sha(got.right.bytes) ? got.right.metadata.sha256 : "torn"
                )
              else seen.add(got.left._tag)
            }
          })
          yield* Effect.all([writer, reader], { concurrency: 2 })
          expect(writes).toBe(10)
          for (const s of seen) expect([olds, news, "FILE_CHANGED_DURING_READ"]).toContain(s)
        }),
      { WORKDIR_01_MAX_BINARY_TRANSFER_BYTES: String(size) }
    )
  })
})

describe("upload_binary_file: the file source through the FileIngress port", () => {
  const ingress = (fetch: FileIngress["Type"]["fetch"]) =>
    Layer.succeed(FileIngress, { enabled: true, fetch })
  const file = { download_url: "https://files.example/x", file_id: "file-1" }

  it.effect("fetched bytes are written; file_name never chooses the destination", () => {
    const root = freshRoot()
    let asked = 0
    return withServer(
      vars(root),
      (h) =>
        Effect.gen(function* () {
          const out = yield* h.bt.uploadBinaryFile({
            workdir: "wd",
            path: "in.png",
            data_base64: null,
            file: { ...file, file_name: "../../evil.png", mime_type: "image/png" },
            overwrite: false,
            expected_revision: null
          })
          expect([out.created, out.sha256, asked]).toEqual([true, sha(PNG), 1])
          expect(fs.readdirSync(root)).toEqual(["in.png"])
        }),
      ingress((request) => {
        asked++
        expect(request.maxBytes).toBe(8388608)
        return Effect.succeed(PNG)
      })
    )
  })

  it.effect("an ingress failure is passed through with its code, nothing written", () => {
    const root = freshRoot()
    return withServer(
      vars(root),
      (h) => refused(root, h.upload("in.bin", { file }), "FILE_INGRESS_FAILED"),
      ingress((r) => Effect.fail(new FileIngressFailed({ workdir: r.workdir, path: r.path })))
    )
  })

  it.effect("more bytes than the limit from the port → BINARY_PAYLOAD_TOO_LARGE, nothing written", () => {
    const root = freshRoot()
    return withServer(
      vars(root, { WORKDIR_01_MAX_BINARY_TRANSFER_BYTES: "4" }),
      (h) => refused(root, h.upload("in.bin", { file }), "BINARY_PAYLOAD_TOO_LARGE"),
      ingress(() => Effect.succeed(Buffer.alloc(5)))
    )
  })
})

describe("the attack matrix (as the text tools)", () => {
  const setup = () => {
    const root = freshRoot({ "a/b/c.bin": "inner", id_rsa: "k", "x.pem": "k" })
    fs.symlinkSync(outside, path.join(root, "out"))
    fs.symlinkSync("a", path.join(root, "alias"))
    fs.symlinkSync(path.join(outside, "secret.bin"), path.join(root, "a/b/leaf.bin"))
    fs.symlinkSync(outside, path.join(root, "a/b/deep"))
    return root
  }
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["../outside/secret.bin", "PATH_OUTSIDE_WORKDIR", "PATH_OUTSIDE_WORKDIR"],
    ["/etc/passwd", "PATH_OUTSIDE_WORKDIR", "PATH_OUTSIDE_WORKDIR"],
    ["~/x", "PATH_OUTSIDE_WORKDIR", "PATH_OUTSIDE_WORKDIR"],
    ["a/../../x", "PATH_OUTSIDE_WORKDIR", "PATH_OUTSIDE_WORKDIR"],
    ["a\0b", "ACCESS_DENIED", "ACCESS_DENIED"],
    ["out/secret.bin", "SYMLINK_NOT_ALLOWED", "SYMLINK_NOT_ALLOWED"],
    ["alias/b/c.bin", "SYMLINK_NOT_ALLOWED", "SYMLINK_NOT_ALLOWED"],
    ["a/b/deep/secret.bin", "SYMLINK_NOT_ALLOWED", "SYMLINK_NOT_ALLOWED"],
    ["a/b/leaf.bin", "SYMLINK_NOT_ALLOWED", "SYMLINK_NOT_ALLOWED"],
    [".env", "HIDDEN_PATH_NOT_ALLOWED", "HIDDEN_PATH_NOT_ALLOWED"],
    [".git/config", "HIDDEN_PATH_NOT_ALLOWED", "HIDDEN_PATH_NOT_ALLOWED"],
    ["id_rsa", "DENIED_PATH", "DENIED_PATH"],
    ["x.pem", "DENIED_PATH", "DENIED_PATH"],
    [".serverfs-tmp-0123456789abcdef", "RESERVED_PATH", "RESERVED_PATH"],
    ["a/.serverfs-disabled", "RESERVED_PATH", "RESERVED_PATH"]
  ]
  it.effect.each(cases)(
    "%s → download %s, replace %s, nothing written outside or inside",
    ([p, down, up]) => {
      const root = setup()
      return run(root, (h) =>
        Effect.gen(function* () {
          const outsideBefore = snapshot(outside)
          yield* expectCode(h.download(p), down)
          yield* refused(
            root,
            h.upload(p, { data_base64: b64("x"), overwrite: true, expected_revision: "v1:0000000000000000" }),
            up
          )
          expect(snapshot(outside)).toEqual(outsideBefore)
        })
      )
    }
  )

  it.effect(
    "create through a symlinked parent → SYMLINK_NOT_ALLOWED; a final symlink → PATH_ALREADY_EXISTS",
    () => {
      const root = setup()
      return run(root, (h) =>
        Effect.gen(function* () {
          const outsideBefore = snapshot(outside)
          yield* refused(root, h.upload("out/new.bin", { data_base64: b64("x") }), "SYMLINK_NOT_ALLOWED")
          yield* refused(root, h.upload("a/b/deep/new.bin", { data_base64: b64("x") }), "SYMLINK_NOT_ALLOWED")
          yield* refused(root, h.upload("a/b/leaf.bin", { data_base64: b64("x") }), "PATH_ALREADY_EXISTS")
          expect(snapshot(outside)).toEqual(outsideBefore)
        })
      )
    }
  )
})

describe("the writer lease", () => {
  it.live(
    "while an Agent holds the workdir's lease, an upload → WORKDIR_BUSY and nothing is written; a download still reads",
    () => {
      const root = freshRoot({ "f.bin": "old" })
      const locks = path.join(base, `locks${counter++}`)
      fs.mkdirSync(path.join(locks, "active"), { recursive: true })
      const lock = path.join(locks, "01.lock")
      fs.writeFileSync(lock, "")
      fs.chmodSync(lock, 0o444)
      return run(
        root,
        (h) =>
          Effect.gen(function* () {
            const holder = yield* Effect.promise(() => holdLease(lock))
            yield* Effect.gen(function* () {
              yield* refused(root, h.upload("new.bin", { data_base64: b64(PNG) }), "WORKDIR_BUSY")
              const rev = revisionAt(path.join(root, "f.bin"))
              yield* refused(
                root,
                h.upload("f.bin", { data_base64: b64(PNG), overwrite: true, expected_revision: rev }),
                "WORKDIR_BUSY"
              )
              expect((yield* h.download("f.bin")).bytes.toString()).toBe("old")
            }).pipe(Effect.ensuring(Effect.promise(() => holder.release())))
            expect((yield* h.upload("new.bin", { data_base64: b64(PNG) })).created).toBe(true)
          }),
        {
          SERVERFS_AGENT_BRIDGE_ENABLED: "true",
          SERVERFS_AGENT_LOCK_DIR: locks,
          // Set explicitly: this environment has no HOME for the user-scoped default.
          SERVERFS_AGENT_BRIDGE_SOCKET: `${locks}.sock`
        }
      )
    }
  )
})

describe("metadata of a replaced file (shared with edit_text_file)", () => {
  const isRoot = process.geteuid?.() === 0
  const owned = (root: string) => {
    const shared = path.join(root, "shared")
    fs.mkdirSync(shared)
    fs.chmodSync(shared, 0o777)
    const file = path.join(shared, "f.bin")
    fs.writeFileSync(file, "before")
    fs.chownSync(file, 1000, 1000)
    fs.chmodSync(file, 0o644)
    return file
  }

  it.skipIf(!isRoot)("as root, a foreign owner and group are kept (needs root to create the file)", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const root = freshRoot()
        const file = owned(root)
        yield* run(root, (h) =>
          h.upload("shared/f.bin", {
            data_base64: b64(PNG),
            overwrite: true,
            expected_revision: revisionAt(file)
          })
        )
        const st = fs.statSync(file)
        expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([1000, 1000, 0o644])
      })
    )
  )

  it.skipIf(!isRoot)(
    "an owner the process cannot reproduce → METADATA_PRESERVATION_FAILED, file unchanged, no temp (needs root to switch uid)",
    () =>
      Effect.runPromise(
        Effect.gen(function* () {
          const root = freshRoot()
          const file = owned(root)
          const revision = revisionAt(file)
          // The entries, not the directory itself: the temp file made and removed there changes
          // the directory's times (as for edit_text_file).
          const shared = path.join(root, "shared")
          const before = snapshot(shared, false)
          yield* run(root, (h) =>
            asUserEffect(
              65534,
              65534,
              expectCode(
                h.upload("shared/f.bin", {
                  data_base64: b64(PNG),
                  overwrite: true,
                  expected_revision: revision
                }),
                "METADATA_PRESERVATION_FAILED"
              )
            )
          )
          expect(snapshot(shared, false)).toEqual(before)
          expect(fs.readFileSync(file, "utf8")).toBe("before")
          expect(revisionAt(file)).toBe(revision)
          expect(leftovers(root)).toEqual([])
        })
      )
  )
})
