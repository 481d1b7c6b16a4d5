/**
 * The hidden × default-deny × extra-glob matrix on every read channel (tool-contracts §5,
 * spec v0.2 §4 "one policy, eleven channels"): list, find and search omit what the policy
 * refuses, and direct access to the same path answers the code. The expected verdict of each
 * fixture path comes from a hand-written classification, not from the implementation's policy.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Api,
  type ChannelError,
  defaultForbidden,
  expectCode,
  expectHygienic,
  recordedErrors,
  type Vars,
  withChannels,
  workdirVars
} from "./fixtures/channels.js"
import { makeBase, removeBase } from "./fixtures/tree.js"

interface Entry {
  readonly path: string
  readonly kind: "file" | "dir"
  /** A component starts with "." */
  readonly hidden?: boolean
  /** A component is caught by a built-in credential rule. */
  readonly builtin?: boolean
  /** A component is caught by one of the extra globs below. */
  readonly extra?: boolean
  readonly reserved?: boolean
}

/** Global extra globs plus the workdir's own (they are unioned). */
const GLOBAL_GLOBS = "internal/**, *.secret"
const WORKDIR_GLOBS = "logs_*/**,docs/secret.md"

const ENTRIES: ReadonlyArray<Entry> = [
  { path: "visible.txt", kind: "file" },
  { path: ".hidden.txt", kind: "file", hidden: true },
  { path: ".env", kind: "file", hidden: true, builtin: true },
  { path: ".env.local", kind: "file", hidden: true, builtin: true },
  { path: "app.env", kind: "file", builtin: true },
  { path: "keys.pem", kind: "file", builtin: true },
  { path: "server.key", kind: "file", builtin: true },
  { path: "id_rsa", kind: "file", builtin: true },
  { path: "id_ed25519", kind: "file", builtin: true },
  { path: "notes.secret", kind: "file", extra: true },
  { path: ".ssh", kind: "dir", hidden: true, builtin: true },
  { path: ".ssh/config", kind: "file", hidden: true, builtin: true },
  { path: ".aws", kind: "dir", hidden: true, builtin: true },
  { path: ".aws/credentials", kind: "file", hidden: true, builtin: true },
  { path: ".kube", kind: "dir", hidden: true, builtin: true },
  { path: ".kube/config", kind: "file", hidden: true, builtin: true },
  { path: ".git", kind: "dir", hidden: true },
  { path: ".git/config", kind: "file", hidden: true },
  { path: ".config", kind: "dir", hidden: true },
  { path: ".config/tool.txt", kind: "file", hidden: true },
  { path: "internal", kind: "dir", extra: true },
  { path: "internal/doc.txt", kind: "file", extra: true },
  { path: "internal/sub", kind: "dir", extra: true },
  { path: "internal/sub/deep.txt", kind: "file", extra: true },
  { path: "logs_2024", kind: "dir", extra: true },
  { path: "logs_2024/app.log", kind: "file", extra: true },
  { path: "docs", kind: "dir" },
  { path: "docs/readme.md", kind: "file" },
  { path: "docs/secret.md", kind: "file", extra: true },
  { path: "docs/.draft.md", kind: "file", hidden: true },
  { path: "docs/internal", kind: "dir", extra: true },
  { path: "docs/internal/x.txt", kind: "file", extra: true },
  // Built-in credential rules ignore ASCII case (deviation; docs/deviations.md).
  { path: "ID_RSA", kind: "file", builtin: true },
  { path: "Id_Ed25519", kind: "file", builtin: true },
  { path: "KEY.PEM", kind: "file", builtin: true },
  { path: "Server.Key", kind: "file", builtin: true },
  { path: "Foo.Env", kind: "file", builtin: true },
  { path: ".ENV", kind: "file", hidden: true, builtin: true },
  { path: ".Env.Prod", kind: "file", hidden: true, builtin: true },
  { path: ".SSH", kind: "dir", hidden: true, builtin: true },
  { path: ".SSH/config", kind: "file", hidden: true, builtin: true },
  { path: "CERTS.PEM", kind: "dir", builtin: true },
  { path: "CERTS.PEM/inner.txt", kind: "file", builtin: true },
  { path: "ID_RSA.PUB", kind: "file" },
  { path: "cert.pem", kind: "dir", builtin: true },
  { path: "cert.pem/inner.txt", kind: "file", builtin: true },
  { path: "nested", kind: "dir" },
  { path: "nested/.serverfs-disabled", kind: "file", hidden: true, reserved: true },
  { path: "nested/ok.txt", kind: "file" },
  { path: ".serverfs-tmp-abc", kind: "file", hidden: true, reserved: true },
  { path: ".serverfs-tmp-dir", kind: "dir", hidden: true, reserved: true },
  { path: ".serverfs-tmp-dir/inner.txt", kind: "file", hidden: true, reserved: true }
]

interface Config {
  readonly allowHidden: boolean
  readonly disableDefaultDeny: boolean
  readonly extraGlobs: boolean
}

type Verdict = "allowed" | "RESERVED_PATH" | "HIDDEN_PATH_NOT_ALLOWED" | "DENIED_PATH"

const verdict = (e: Entry, c: Config): Verdict => {
  if (e.reserved) return "RESERVED_PATH"
  if (e.hidden && !c.allowHidden) return "HIDDEN_PATH_NOT_ALLOWED"
  if ((e.builtin && !c.disableDefaultDeny) || (e.extra && c.extraGlobs)) return "DENIED_PATH"
  return "allowed"
}

const parentOf = (p: string): string => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "")
const nameOf = (p: string): string => p.slice(p.lastIndexOf("/") + 1)
const isVcs = (p: string): boolean => p.split("/").some((c) => c === ".git")

let base = ""
let root = ""

beforeAll(() => {
  base = makeBase("serverfs-ws-matrix-")
  root = path.join(base, "wd")
  fs.mkdirSync(root)
  for (const e of ENTRIES) {
    const target = path.join(root, e.path)
    if (e.kind === "dir") fs.mkdirSync(target)
    else fs.writeFileSync(target, `NEEDLE in ${e.path}\n`)
  }
})

afterAll(() => removeBase(base))

const varsOf = (c: Config): Vars =>
  workdirVars(root, {
    WORKDIR_01_ALLOW_HIDDEN: String(c.allowHidden),
    SERVERFS_DISABLE_DEFAULT_DENY: String(c.disableDefaultDeny),
    ...(c.extraGlobs
      ? { SERVERFS_EXTRA_DENY_GLOBS: GLOBAL_GLOBS, WORKDIR_01_EXTRA_DENY_GLOBS: WORKDIR_GLOBS }
      : {}),
    SERVERFS_MAX_SEARCH_RESULTS: "1000",
    SERVERFS_MAX_LIST_ENTRIES: "1000"
  })

const direct = (
  c: Config,
  kinds: ReadonlyArray<Entry["kind"]>,
  call: (a: Api, p: string) => Effect.Effect<unknown, ChannelError>
) =>
  withChannels(varsOf(c), (a) =>
    Effect.forEach(
      ENTRIES.filter((e) => kinds.includes(e.kind)),
      (e) => {
        const v = verdict(e, c)
        return v === "allowed"
          ? Effect.asVoid(call(a, e.path))
          : Effect.asVoid(expectCode(call(a, e.path), v, undefined))
      }
    )
  )

const visibleFiles = (c: Config, under = ""): string[] =>
  ENTRIES.filter(
    (e) =>
      e.kind === "file" && verdict(e, c) === "allowed" && (under === "" || e.path.startsWith(`${under}/`))
  )
    .map((e) => e.path)
    .sort()

const configs: Config[] = []
for (const allowHidden of [false, true])
  for (const disableDefaultDeny of [false, true])
    for (const extraGlobs of [false, true]) configs.push({ allowHidden, disableDefaultDeny, extraGlobs })

for (const c of configs) {
  const label = `[hidden ${c.allowHidden ? "allowed" : "off"}, default deny ${c.disableDefaultDeny ? "disabled" : "on"}, extra globs ${c.extraGlobs ? "set" : "none"}]`
  describe(label, () => {
    it.effect("read_text_file: allowed files read, the others answer their code", () =>
      direct(c, ["file"], (a, p) => a.read("wd", p))
    )
    it.effect("resource: same verdicts as read_text_file", () =>
      direct(c, ["file"], (a, p) => a.resource("wd", p))
    )
    it.effect("stat_file: same verdicts for files and directories", () =>
      direct(c, ["file", "dir"], (a, p) => a.stat("wd", p))
    )
    it.effect(
      "list_directory: each directory lists exactly its allowed children; refused ones answer the code",
      () =>
        withChannels(varsOf(c), (a) =>
          Effect.gen(function* () {
            yield* direct(c, ["dir"], (x, p) => x.list("wd", p))
            const dirs = [
              "",
              ...ENTRIES.filter((e) => e.kind === "dir" && verdict(e, c) === "allowed").map((e) => e.path)
            ]
            for (const d of dirs) {
              const listed = yield* a.list("wd", d, { limit: 1000 })
              const expected = ENTRIES.filter((e) => parentOf(e.path) === d && verdict(e, c) === "allowed")
                .map((e) => nameOf(e.path))
                .sort()
              expect(listed.entries.map((e) => e.name).sort(), `list ${d}`).toEqual(expected)
            }
          })
        )
    )
    it.effect(
      "find_files: exactly the allowed files (denied subtrees pruned); refused roots answer the code",
      () =>
        withChannels(varsOf(c), (a) =>
          Effect.gen(function* () {
            yield* direct(c, ["dir"], (x, p) => x.find("wd", "*", p))
            const found = yield* a.find("wd", "*", "", { limit: 1000 })
            expect(found.matches.map((m) => m.path).sort()).toEqual(visibleFiles(c))
            expect(found.truncated).toBe(false)
            const inDocs = yield* a.find("wd", "*", "docs", { limit: 1000 })
            expect(inDocs.matches.map((m) => m.path).sort()).toEqual(visibleFiles(c, "docs"))
          })
        )
    )
    it.effect("search_text: exactly the allowed files except VCS dirs; refused roots answer the code", () =>
      withChannels(varsOf(c), (a) =>
        Effect.gen(function* () {
          yield* direct(c, ["dir"], (x, p) => x.search("wd", "NEEDLE", p))
          const hits = yield* a.search("wd", "NEEDLE", "", { limit: 1000 })
          expect(hits.matches.map((m) => m.path).sort()).toEqual(visibleFiles(c).filter((p) => !isVcs(p)))
          for (const m of hits.matches) expect(m.text).toBe(`NEEDLE in ${m.path}`)
          const inDocs = yield* a.search("wd", "NEEDLE", "docs", { limit: 1000 })
          expect(inDocs.matches.map((m) => m.path).sort()).toEqual(visibleFiles(c, "docs"))
        })
      )
    )
  })
}

describe("hygiene", () => {
  it("no error text of the matrix contains a host path, an inode number or a temp name", () => {
    expect(expectHygienic(recordedErrors(), defaultForbidden())).toBeGreaterThan(300)
  })
})
