/**
 * Check order and error codes on every read channel (tool-contracts §0, §2, §5): unknown workdir
 * first, then the pure path policy (NUL, outside, reserved, hidden, denied), then what the
 * descriptor walk finds on disk. Symbolic links at every level, the sibling-prefix escape, and
 * the codes of §5 for links that are absolute, relative, inside, into another workdir or broken.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  ALL_CHANNELS,
  type Channel,
  callChannel,
  defaultForbidden,
  expectCode,
  expectHygienic,
  recordedErrors,
  type Vars,
  withChannels
} from "./fixtures/channels.js"
import { buildTree, closeSockets, makeBase, removeBase } from "./fixtures/tree.js"

let base = ""
let allowed = ""
let vars: Vars = {}

beforeAll(async () => {
  base = makeBase("serverfs-ws-order-")
  allowed = path.join(base, "allowed")
  const other = path.join(base, "other")
  const outside = path.join(base, "outside")
  const evil = path.join(base, "allowed_evil")
  fs.mkdirSync(allowed)
  await buildTree(base, {
    allowed_evil: { dir: { "secret.txt": "EVIL x\n", "file.txt": "EVIL x\n" } },
    other: { dir: { "shared.txt": "OTHER x\n", sub: { dir: { "deep.txt": "OTHER x\n" } } } },
    outside: { dir: { "secret.txt": "OUTSIDE x\n", deeper: { dir: { "leaf.txt": "OUTSIDE x\n" } } } }
  })
  await buildTree(allowed, {
    "file.txt": "hello x\n",
    dir: { dir: { "inner.txt": "inner x\n", deeper: { dir: { "leaf.txt": "leaf x\n" } } } },
    ".hidden.txt": "hidden x\n",
    ".env": "SECRET=x\n",
    "keys.pem": { dir: { "inner.txt": "pem x\n" } },
    id_rsa: "key x\n",
    "notes.secret": "extra x\n",
    internal: { dir: { "doc.txt": "internal x\n" } },
    ".serverfs-tmp-abc": "temp x\n",
    nested: { dir: { ".serverfs-disabled": "sentinel x\n" } },
    links: {
      dir: {
        "abs-file": { symlink: path.join(allowed, "file.txt") },
        "rel-file": { symlink: "../file.txt" },
        "abs-dir": { symlink: path.join(allowed, "dir") },
        "rel-dir": { symlink: "../dir" },
        broken: { symlink: "./missing" },
        "other-wd-file": { symlink: path.join(other, "shared.txt") },
        "other-wd-dir": { symlink: other },
        "outside-file": { symlink: path.join(outside, "secret.txt") },
        "outside-dir": { symlink: outside },
        sibling: { symlink: "../../allowed_evil" },
        "sibling-abs": { symlink: evil }
      }
    },
    fifo: { fifo: true },
    sock: { socket: true }
  })
  vars = {
    WORKDIR_01_ALIAS: "wd",
    WORKDIR_01_PATH: allowed,
    WORKDIR_01_EXTRA_DENY_GLOBS: "internal/**,*.secret",
    WORKDIR_02_ALIAS: "other",
    WORKDIR_02_PATH: other
  }
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

const onEvery = (
  name: string,
  body: (channel: Channel) => Effect.Effect<unknown, unknown, never>,
  channels: ReadonlyArray<Channel> = ALL_CHANNELS
) => {
  for (const channel of channels) it.effect(`${channel}: ${name}`, () => body(channel))
}

const expectOn = (channel: Channel, workdir: string, p: string, code: string, text?: string, v?: Vars) =>
  withChannels(v ?? vars, (a) => expectCode(callChannel(a, channel, workdir, p), code, text))

describe("1. unknown workdir comes first", () => {
  onEvery("unknown workdir → WORKDIR_NOT_FOUND ('nope' is not a configured workdir)", (channel) =>
    Effect.forEach(["file.txt", "../x", "a\0b", ".serverfs-tmp-abc", ".env", "missing"], (p) =>
      expectOn(
        channel,
        "nope",
        p,
        "WORKDIR_NOT_FOUND",
        "WORKDIR_NOT_FOUND: 'nope' is not a configured workdir"
      )
    )
  )
  onEvery("aliases are case-sensitive: 'WD' → WORKDIR_NOT_FOUND", (channel) =>
    expectOn(
      channel,
      "WD",
      "file.txt",
      "WORKDIR_NOT_FOUND",
      "WORKDIR_NOT_FOUND: 'WD' is not a configured workdir"
    )
  )
})

describe("2. path normalization (pure, before any filesystem access)", () => {
  onEvery("NUL anywhere → ACCESS_DENIED (path contains NUL bytes), before the outside check", (channel) =>
    Effect.forEach(["a\0b", "/etc\0", "../\0", ".serverfs-tmp-\0"], (p) =>
      Effect.map(expectOn(channel, "wd", p, "ACCESS_DENIED"), (e) => {
        expect(e.message).toContain("access denied (path contains NUL bytes)")
      })
    )
  )
  onEvery("absolute, ~ and escaping .. → PATH_OUTSIDE_WORKDIR", (channel) =>
    Effect.forEach(
      [
        "/etc/passwd",
        "/",
        allowed,
        "~",
        "~/x",
        "~root",
        "..",
        "../",
        "a/../../b",
        "dir/../..",
        "./../allowed"
      ],
      (p) => expectOn(channel, "wd", p, "PATH_OUTSIDE_WORKDIR")
    )
  )
  it.effect("the PATH_OUTSIDE_WORKDIR text is `wd:<path as given> — resolved path escapes the workdir`", () =>
    expectOn(
      "stat",
      "wd",
      "a/../../b",
      "PATH_OUTSIDE_WORKDIR",
      "PATH_OUTSIDE_WORKDIR: wd:a/../../b — resolved path escapes the workdir"
    )
  )
  onEvery("outside is decided before reserved/hidden/denied (../.serverfs-tmp-x, ../.env)", (channel) =>
    Effect.forEach(["../.serverfs-tmp-x", "../.env", "../keys.pem"], (p) =>
      expectOn(channel, "wd", p, "PATH_OUTSIDE_WORKDIR")
    )
  )
  onEvery(
    "`..\\..\\etc` is one literal name → PATH_NOT_FOUND (hidden allowed; HIDDEN otherwise)",
    (channel) =>
      Effect.all([
        expectOn(
          channel,
          "wd",
          "..\\..\\etc",
          "PATH_NOT_FOUND",
          "PATH_NOT_FOUND: wd:..\\..\\etc — no such file or directory",
          { ...vars, WORKDIR_01_ALLOW_HIDDEN: "true" }
        ),
        expectOn(channel, "wd", "..\\..\\etc", "HIDDEN_PATH_NOT_ALLOWED"),
        expectOn(channel, "wd", "dir\\..\\..\\etc", "PATH_NOT_FOUND")
      ])
  )
  it.effect("foo/../file.txt, ./file.txt and dir/./../file.txt normalize to file.txt", () =>
    withChannels(vars, (a) =>
      Effect.forEach(["foo/../file.txt", "./file.txt", "dir/./../file.txt", "dir//../file.txt"], (p) =>
        Effect.map(a.read("wd", p), (r) => {
          expect(r.content).toBe("hello x\n")
          expect(r.path).toBe(p)
        })
      )
    )
  )
})

describe("3. the reserved namespace: RESERVED_PATH whatever the settings", () => {
  const settings: ReadonlyArray<readonly [string, () => Vars]> = [
    ["default settings", () => vars],
    [
      "hidden allowed and default deny disabled",
      () => ({
        ...vars,
        WORKDIR_01_ALLOW_HIDDEN: "true",
        WORKDIR_01_DISABLE_DEFAULT_DENY: "true",
        WORKDIR_01_EXTRA_DENY_GLOBS: ""
      })
    ],
    [
      "global SERVERFS_ALLOW_HIDDEN and SERVERFS_DISABLE_DEFAULT_DENY",
      () => ({ ...vars, SERVERFS_ALLOW_HIDDEN: "true", SERVERFS_DISABLE_DEFAULT_DENY: "true" })
    ]
  ]
  for (const [label, v] of settings) {
    onEvery(`reserved components → RESERVED_PATH (${label})`, (channel) =>
      Effect.forEach(
        [
          ".serverfs-tmp-abc",
          ".serverfs-tmp-",
          "dir/.serverfs-tmp-x/y",
          "nested/.serverfs-disabled",
          ".serverfs-disabled",
          ".serverfs-tmp-x.pem",
          ".serverfs-tmp-x/.env"
        ],
        (p) =>
          expectOn(
            channel,
            "wd",
            p,
            "RESERVED_PATH",
            `RESERVED_PATH: wd:${p} — path is reserved for ServerFS internals`,
            v()
          )
      )
    )
  }
})

describe("4. hidden, then denied, then the filesystem", () => {
  onEvery("a hidden component → HIDDEN_PATH_NOT_ALLOWED (`.env` is HIDDEN, not DENIED)", (channel) =>
    Effect.forEach([".hidden.txt", ".env", "dir/.x/y", ".ssh", ".missing"], (p) =>
      expectOn(
        channel,
        "wd",
        p,
        "HIDDEN_PATH_NOT_ALLOWED",
        `HIDDEN_PATH_NOT_ALLOWED: wd:${p} — hidden paths are not allowed in this workdir`
      )
    )
  )
  onEvery("with hidden allowed, `.env` → DENIED_PATH", (channel) =>
    expectOn(channel, "wd", ".env", "DENIED_PATH", "DENIED_PATH: wd:.env — path is denied by policy", {
      ...vars,
      WORKDIR_01_ALLOW_HIDDEN: "true"
    })
  )
  onEvery("built-in and extra deny rules → DENIED_PATH, on the path and on every ancestor", (channel) =>
    Effect.forEach(
      [
        "keys.pem",
        "keys.pem/inner.txt",
        "id_rsa",
        "app.env",
        "missing.key",
        "internal",
        "internal/doc.txt",
        "internal/missing/deeper",
        "notes.secret",
        "dir/x.secret"
      ],
      (p) => expectOn(channel, "wd", p, "DENIED_PATH", `DENIED_PATH: wd:${p} — path is denied by policy`)
    )
  )
  onEvery(
    "policy is decided before the walk: hidden/denied inside a symlinked dir are not SYMLINK",
    (channel) =>
      Effect.all([
        expectOn(channel, "wd", "links/abs-dir/.env", "HIDDEN_PATH_NOT_ALLOWED"),
        expectOn(channel, "wd", "links/abs-dir/x.pem", "DENIED_PATH"),
        expectOn(channel, "wd", "links/broken/.serverfs-tmp-1", "RESERVED_PATH")
      ])
  )
  onEvery("a missing path → PATH_NOT_FOUND", (channel) =>
    Effect.forEach(["missing", "dir/missing", "missing/deeper/x"], (p) =>
      expectOn(channel, "wd", p, "PATH_NOT_FOUND", `PATH_NOT_FOUND: wd:${p} — no such file or directory`)
    )
  )
  onEvery(
    "a file used as a directory → NOT_A_DIRECTORY",
    (channel) =>
      expectOn(
        channel,
        "wd",
        "file.txt/x",
        "NOT_A_DIRECTORY",
        "NOT_A_DIRECTORY: wd:file.txt/x — not a directory"
      ),
    ALL_CHANNELS
  )
  onEvery(
    "a file as the root of list/find/search → NOT_A_DIRECTORY",
    (channel) =>
      expectOn(
        channel,
        "wd",
        "file.txt",
        "NOT_A_DIRECTORY",
        "NOT_A_DIRECTORY: wd:file.txt — not a directory"
      ),
    ["list", "find", "search"]
  )
  onEvery(
    "a directory (or the root) as a file → NOT_A_FILE",
    (channel) =>
      Effect.forEach(["dir", "", ".", "dir/.."], (p) =>
        expectOn(channel, "wd", p, "NOT_A_FILE", `NOT_A_FILE: wd:${p} — is a directory`)
      ),
    ["read", "resource"]
  )
})

describe("5. symbolic links (§5): never followed, at any level", () => {
  const links = [
    "abs-file",
    "rel-file",
    "abs-dir",
    "rel-dir",
    "broken",
    "other-wd-file",
    "other-wd-dir",
    "outside-file",
    "outside-dir",
    "sibling",
    "sibling-abs"
  ] as const
  const dirLinks = ["abs-dir", "rel-dir", "other-wd-dir", "outside-dir", "sibling", "sibling-abs"] as const

  it.effect("stat of a final symlink → type symlink, no size, no mime, no target shown", () =>
    withChannels(vars, (a) =>
      Effect.forEach(links, (l) =>
        Effect.map(a.stat("wd", `links/${l}`), (s) => {
          expect(s).toMatchObject({ path: `links/${l}`, type: "symlink", size: null, mime_type: null })
          expect(s.revision).toMatch(/^v1:[0-9a-f]{16}$/)
          const target = fs.readlinkSync(path.join(allowed, "links", l))
          expect(JSON.stringify(s)).not.toContain(target)
          expect(JSON.stringify(s)).not.toContain(base)
        })
      )
    )
  )
  it.effect("list shows every link as `symlink` with size null", () =>
    withChannels(vars, (a) =>
      Effect.map(a.list("wd", "links"), (r) => {
        expect(r.entries.map((e) => [e.name, e.type, e.size])).toEqual(
          [...links].sort().map((l) => [l, "symlink", null])
        )
        expect(JSON.stringify(r)).not.toContain(base)
      })
    )
  )
  for (const channel of ALL_CHANNELS.filter((c) => c !== "stat")) {
    it.effect(
      `${channel}: a final symlink (file, dir, broken, other workdir, outside) → SYMLINK_NOT_ALLOWED`,
      () =>
        Effect.forEach(links, (l) =>
          expectOn(
            channel,
            "wd",
            `links/${l}`,
            "SYMLINK_NOT_ALLOWED",
            `SYMLINK_NOT_ALLOWED: wd:links/${l} — symbolic links are not followed`
          )
        )
    )
  }
  onEvery("a symlinked parent (any kind of link) → SYMLINK_NOT_ALLOWED", (channel) =>
    Effect.forEach(
      [
        ...dirLinks.map((l) => `links/${l}/x`),
        "links/abs-dir/inner.txt",
        "links/rel-dir/inner.txt",
        "links/other-wd-dir/shared.txt",
        "links/outside-dir/secret.txt",
        "links/sibling/secret.txt",
        "links/sibling-abs/secret.txt",
        "links/broken/x",
        "links/abs-file/x"
      ],
      (p) => expectOn(channel, "wd", p, "SYMLINK_NOT_ALLOWED")
    )
  )
  onEvery("a symlinked grandparent → SYMLINK_NOT_ALLOWED", (channel) =>
    Effect.forEach(
      [
        "links/abs-dir/deeper/leaf.txt",
        "links/rel-dir/deeper/leaf.txt",
        "links/outside-dir/deeper/leaf.txt",
        "links/other-wd-dir/sub/deep.txt",
        "links/broken/x/y"
      ],
      (p) => expectOn(channel, "wd", p, "SYMLINK_NOT_ALLOWED")
    )
  )
  onEvery("a symlinked parent reached through `x/..` normalization is still refused", (channel) =>
    expectOn(channel, "wd", "dir/../links/abs-dir/inner.txt", "SYMLINK_NOT_ALLOWED")
  )
  it.effect("find and search never enter a symlinked directory (no link target content or name)", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const found = yield* a.find("wd", "*", "", { limit: 100 })
        const paths = found.matches.map((m) => m.path)
        expect(paths.filter((p) => p.startsWith("links/"))).toEqual([])
        expect(paths).toContain("dir/deeper/leaf.txt")
        const searched = yield* a.search("wd", "x", "", { limit: 100 })
        const texts = searched.matches.map((m) => `${m.path}:${m.text}`)
        expect(texts.filter((t) => /OUTSIDE|OTHER|EVIL|links\//.test(t))).toEqual([])
        expect(texts).toContain("file.txt:hello x")
      })
    )
  )
})

describe("6. sibling-prefix escape: workdir …/allowed never reaches …/allowed_evil", () => {
  const attempts = [
    "../allowed_evil/secret.txt",
    "../allowed_evil",
    "./../allowed_evil/file.txt",
    "dir/../../allowed_evil/secret.txt",
    "..\\allowed_evil\\secret.txt",
    "allowed_evil/secret.txt",
    "_evil/secret.txt",
    "links/sibling",
    "links/sibling/secret.txt",
    "links/sibling-abs/file.txt"
  ]
  onEvery("every spelling fails and nothing of the sibling is returned", (channel) =>
    withChannels(vars, (a) =>
      Effect.forEach(attempts, (p) =>
        Effect.map(Effect.either(callChannel(a, channel, "wd", p)), (result) => {
          // stat reports a final symlink itself (type "symlink"); nothing else may succeed.
          if (channel === "stat" && p.startsWith("links/") && p.split("/").length === 2) {
            expect(result).toMatchObject({ _tag: "Right", right: { type: "symlink", size: null } })
          } else {
            expect(result._tag, `${channel} ${p}`).toBe("Left")
          }
          if (result._tag === "Right") expect(JSON.stringify(result.right)).not.toMatch(/EVIL|allowed_evil/)
        })
      )
    )
  )
  it.effect("a search and a find of the whole workdir never show the sibling", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        const s = yield* a.search("wd", "EVIL")
        expect(s.matches).toEqual([])
        const f = yield* a.find("wd", "secret.txt")
        expect(f.matches).toEqual([])
      })
    )
  )
})

describe("7. another workdir is reachable only by its own alias", () => {
  it.effect("other:shared.txt reads; wd:../other/shared.txt is outside", () =>
    withChannels(vars, (a) =>
      Effect.gen(function* () {
        expect((yield* a.read("other", "shared.txt")).content).toBe("OTHER x\n")
        yield* expectCode(a.read("wd", "../other/shared.txt"), "PATH_OUTSIDE_WORKDIR")
        yield* expectCode(a.read("other", "../allowed/file.txt"), "PATH_OUTSIDE_WORKDIR")
      })
    )
  )
})

describe("8. hygiene of every error text above", () => {
  it("no error text contains a host path, the temp dir, an inode number or a temp-file name", () => {
    const checked = expectHygienic(recordedErrors(), defaultForbidden())
    expect(checked).toBeGreaterThan(500)
  })
})
