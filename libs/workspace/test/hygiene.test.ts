/**
 * Error hygiene (tool-contracts §0, spec v0.2 §8): a sweep over a large matrix of failing calls
 * on every channel and several configurations. Once the caller's own strings (the `wd:path`
 * echo and the quoted alias) are removed, no error text may contain a host path, the temp dir,
 * `/tmp`, an inode or device number of any fixture entry, the owner's uid/gid, a temp-file
 * name, file content, the search query or a child name of a directory; texts are single-line
 * and bounded whatever the input.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  ALL_CHANNELS,
  type Api,
  type ChannelError,
  callChannel,
  defaultForbidden,
  expectHygienic,
  leaksOf,
  type RecordedError,
  recordedErrors,
  type Vars,
  withChannels,
  workdirVars
} from "./fixtures/channels.js"
import { buildTree, closeSockets, makeBase, openUp, removeBase } from "./fixtures/tree.js"

/** A distinctive owner for every fixture entry, so its numbers can be looked for. */
const OWNER_UID = 43210
const OWNER_GID = 43211
const CONTENT = "CONTENT-MARKER-7f3a"
const CHILD = "child-name-marker-91c2"
const QUERY = "QUERY-MARKER-5d1e"

const isRoot = process.getuid?.() === 0

let base = ""
let root = ""
let vars: Vars = {}

beforeAll(async () => {
  base = makeBase("serverfs-ws-hygiene-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  await buildTree(base, { outside: { dir: { "o.txt": CONTENT } } })
  await buildTree(root, {
    "ok.txt": `${CONTENT}\n`,
    "binary.bin": `${CONTENT}\0\n`,
    "long.txt": `${CONTENT.repeat(20)}\n`,
    "bad.txt": Buffer.concat([Buffer.from(`${CONTENT} `), Buffer.from([0xff, 0x0a])]),
    "big.txt": `${CONTENT}\n`.repeat(50),
    dir: { dir: { [CHILD]: CONTENT, [`.${CHILD}`]: CONTENT } },
    link: { symlink: path.join(base, "outside", "o.txt") },
    "dir-link": { symlink: path.join(base, "outside") },
    broken: { symlink: path.join(base, "nowhere", CHILD) },
    fifo: { fifo: true },
    sock: { socket: true },
    "locked.txt": CONTENT,
    ".serverfs-tmp-0123456789abcdef": CONTENT,
    "keys.pem": CONTENT,
    internal: { dir: { [CHILD]: CONTENT } },
    // Denied by a path glob, which rg cannot be told to skip: every match is read and rejected,
    // so a 0.05 s deadline is exceeded whatever the machine's speed.
    flood: { dir: { "flood.txt": `${QUERY}\n`.repeat(200_000) } }
  })
  openUp(root)
  fs.chmodSync(path.join(root, "locked.txt"), 0o000)
  if (isRoot) {
    const own = (p: string): void => {
      fs.lchownSync(p, OWNER_UID, OWNER_GID)
      if (fs.lstatSync(p).isDirectory()) for (const n of fs.readdirSync(p)) own(path.join(p, n))
    }
    own(root)
  } else {
    console.log(
      "[hygiene] not root: fixture ownership cannot be set; uid/gid checked for the current user only"
    )
  }
  vars = workdirVars(root, {
    SERVERFS_EXTRA_DENY_GLOBS: "internal/**,*.deny,flood/flood.txt",
    WORKDIR_01_MAX_READ_BYTES: "100",
    WORKDIR_01_MAX_READ_LINES: "10"
  })
})

afterAll(async () => {
  await closeSockets()
  removeBase(base)
})

const PATHS = [
  "",
  "missing",
  `missing/${CHILD}`,
  "ok.txt",
  "ok.txt/x",
  "binary.bin",
  "long.txt",
  "bad.txt",
  "big.txt",
  "dir",
  `dir/${CHILD}/x`,
  "link",
  "link/x",
  "dir-link",
  "dir-link/o.txt",
  "broken",
  "broken/x",
  "fifo",
  "fifo/x",
  "sock",
  "locked.txt",
  ".serverfs-tmp-0123456789abcdef",
  ".serverfs-tmp-x/y",
  "dir/.serverfs-disabled",
  ".env",
  `dir/.${CHILD}`,
  "keys.pem",
  "internal",
  `internal/${CHILD}`,
  "flood",
  "a\0b",
  "/etc/passwd",
  "~",
  "..",
  "a/../../b",
  "..\\..\\etc",
  "line\nbreak",
  "tab\there\r\u2028\u0085",
  "x".repeat(5000)
]

const CONFIGS: ReadonlyArray<readonly [string, () => Vars]> = [
  ["defaults", () => vars],
  ["hidden allowed", () => ({ ...vars, WORKDIR_01_ALLOW_HIDDEN: "true" })],
  ["default deny disabled", () => ({ ...vars, SERVERFS_DISABLE_DEFAULT_DENY: "true" })]
]

/** Every channel × every path, plus the search-specific failures, as the given user. */
const sweep = (a: Api, asNobody: boolean) => {
  const run = (effect: Effect.Effect<unknown, ChannelError>) =>
    asNobody && isRoot
      ? Effect.acquireUseRelease(
          Effect.sync(() => process.seteuid!(65534)),
          () => Effect.either(effect),
          () => Effect.sync(() => process.seteuid!(0))
        )
      : Effect.either(effect)
  return Effect.gen(function* () {
    const successes: string[] = []
    for (const channel of ALL_CHANNELS) {
      for (const p of PATHS) {
        const r = yield* run(callChannel(a, channel, "wd", p))
        if (r._tag === "Right") successes.push(JSON.stringify(r.right))
      }
    }
    for (const workdir of ["nope", "", "a\0b", "x".repeat(5000), "line\nbreak"]) {
      for (const channel of ALL_CHANNELS) yield* run(callChannel(a, channel, workdir, "ok.txt"))
    }
    yield* run(a.search("wd", QUERY, "", { glob: "[" }))
    yield* run(a.search("wd", `${QUERY}\nmore`))
    yield* run(a.search("wd", `${QUERY}\0`))
    return successes
  })
}

describe("error hygiene sweep", () => {
  it.live("no failing call on any channel leaks host paths, numbers, content, queries or child names", () =>
    Effect.gen(function* () {
      const start = recordedErrors().length
      const successes: string[] = []
      for (const [, v] of CONFIGS) {
        successes.push(...(yield* withChannels(v(), (a) => sweep(a, false))))
      }
      successes.push(...(yield* withChannels(vars, (a) => sweep(a, true))))
      // The deadline path, whose text names the deadline.
      yield* withChannels({ ...vars, SERVERFS_SEARCH_TIMEOUT_SECONDS: "0.05" }, (a) =>
        Effect.either(a.search("wd", QUERY, "flood"))
      )
      const entries: ReadonlyArray<RecordedError> = recordedErrors().slice(start)
      const codes = new Set(entries.map((e) => e.tag))
      console.log(`[hygiene] ${entries.length} error texts, codes: ${[...codes].sort().join(" ")}`)
      expect(entries.length).toBeGreaterThan(700)
      for (const code of [
        "WORKDIR_NOT_FOUND",
        "ACCESS_DENIED",
        "PATH_OUTSIDE_WORKDIR",
        "RESERVED_PATH",
        "HIDDEN_PATH_NOT_ALLOWED",
        "DENIED_PATH",
        "SYMLINK_NOT_ALLOWED",
        "PATH_NOT_FOUND",
        "NOT_A_FILE",
        "NOT_A_DIRECTORY",
        "UNSUPPORTED_FILE_TYPE",
        "BINARY_FILE",
        "UNSUPPORTED_TEXT_ENCODING",
        "LINE_TOO_LARGE",
        "RESOURCE_TOO_LARGE",
        "SEARCH_FAILED",
        "SEARCH_TIMEOUT",
        "INVALID_ARGUMENT"
      ]) {
        expect(codes, code).toContain(code)
      }

      const uid = String(process.getuid?.() ?? OWNER_UID)
      const forbidden = defaultForbidden([
        String(OWNER_UID),
        String(OWNER_GID),
        "65534",
        ...(uid === "0" ? [] : [uid])
      ])
      const extended = {
        substrings: [...forbidden.substrings, CONTENT, CHILD, QUERY, "outside", "nowhere", "o.txt"],
        numbers: forbidden.numbers
      }
      expectHygienic(entries, extended)
      for (const e of entries) {
        // Single line, no raw control characters, bounded length, `CODE: message` form.
        const controls = [...e.text].filter((c) => {
          const u = c.charCodeAt(0)
          return u < 0x20 || (u >= 0x7f && u <= 0x9f) || u === 0x2028 || u === 0x2029
        })
        expect(controls, e.text).toEqual([])
        expect(e.text.length).toBeLessThan(800)
        expect(e.text.startsWith(`${e.tag}: `)).toBe(true)
      }
      const permission = entries.filter((e) => e.tag === "ACCESS_DENIED" && e.request.path === "locked.txt")
      expect(permission.length).toBeGreaterThan(0)
      for (const e of permission)
        expect(e.text).toBe("ACCESS_DENIED: wd:locked.txt — access denied (permission denied)")
      // Successful outputs of the sweep do not show host paths either.
      for (const s of successes) {
        for (const b of forbidden.substrings.filter((x) => x.startsWith("/"))) expect(s).not.toContain(b)
      }
    })
  )
  it("the leak detector itself finds each kind of leak (so the sweep can fail)", () => {
    const forbidden = { substrings: [base, "/tmp", ".serverfs-tmp-"], numbers: ["1234567"] }
    const leaky = (text: string): RecordedError => ({
      request: { channel: "read", workdir: "wd", path: "p" },
      tag: "X",
      text
    })
    expect(leaksOf(leaky(`X: wd:p — at ${base}/p`), forbidden)).toContain(base)
    expect(leaksOf(leaky("X: wd:p — /tmp/x"), forbidden)).toContain("/tmp")
    expect(leaksOf(leaky("X: wd:p — .serverfs-tmp-ab12"), forbidden)).toContain(".serverfs-tmp-")
    expect(leaksOf(leaky("X: wd:p — inode 1234567"), forbidden)).toEqual(["1234567"])
    expect(leaksOf(leaky("X: wd:p — inode 91234567"), forbidden)).toEqual([])
    // The caller's own echo is not a leak.
    const echo: RecordedError = {
      request: { channel: "read", workdir: "wd", path: "/tmp/.serverfs-tmp-x" },
      tag: "PATH_OUTSIDE_WORKDIR",
      text: "PATH_OUTSIDE_WORKDIR: wd:/tmp/.serverfs-tmp-x — resolved path escapes the workdir"
    }
    expect(leaksOf(echo, forbidden)).toEqual([])
  })
})
