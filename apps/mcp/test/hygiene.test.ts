import * as fs from "node:fs"
import * as net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { errorCodeOf, eventuallyAsync, scopedMcp, scopedTempTree, textOf } from "@serverfs/testkit"
import { Effect } from "effect"

/**
 * Thousands of calls against the real process, failing ones included: the fd count of the
 * server does not grow, and no error text or audit line ever shows a host path, a temp name,
 * an inode number or a uid.
 */
/** The served tree, a Unix socket inside it, and the server: all released by the test's Scope. */
const fixture = Effect.gen(function* () {
  const tree = yield* scopedTempTree()
  tree.file("docs/readme.md", "needle here\n")
  tree.file("bin.dat", Buffer.from([1, 0, 2]))
  tree.file("enc.txt", Buffer.from([0xff, 0xfe, 0x41, 0x0a]))
  tree.file(".serverfs-tmp-0123456789abcdef", "temp\n")
  tree.file("secret.pem", "key\n")
  tree.symlink("link-out", tree.outside)
  tree.symlink("docs/link-file", "/etc/hostname")
  fs.writeFileSync(`${tree.outside}/x.txt`, "outside\n")
  yield* Effect.acquireRelease(
    Effect.promise(() => {
      const server = net.createServer()
      return new Promise<net.Server>((r) => server.listen(`${tree.root}/sock`, () => r(server)))
    }),
    (server) => Effect.sync(() => server.close())
  )
  const mcp = yield* scopedMcp({ WORKDIR_01_ALIAS: "w", WORKDIR_01_PATH: tree.root })
  return { tree, mcp }
})

const fdCount = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).length

const FAILING: ReadonlyArray<[string, Record<string, unknown>]> = [
  ["read_text_file", { workdir: "w", path: "../x" }],
  ["read_text_file", { workdir: "w", path: "link-out/x.txt" }],
  ["read_text_file", { workdir: "w", path: "docs/link-file" }],
  ["read_text_file", { workdir: "w", path: "bin.dat" }],
  ["read_text_file", { workdir: "w", path: "enc.txt" }],
  ["read_text_file", { workdir: "w", path: "sock" }],
  ["read_text_file", { workdir: "w", path: "docs" }],
  ["read_text_file", { workdir: "w", path: "missing/deeper" }],
  ["read_text_file", { workdir: "w", path: ".serverfs-tmp-0123456789abcdef" }],
  ["read_text_file", { workdir: "w", path: "secret.pem" }],
  ["read_text_file", { workdir: "w", path: "a\u0000b" }],
  ["list_directory", { workdir: "w", path: "docs/readme.md" }],
  ["list_directory", { workdir: "w", path: "link-out" }],
  ["find_files", { workdir: "w", pattern: "*", path: "nope" }],
  ["search_text", { workdir: "w", query: "x", path: "bin.dat" }],
  ["search_text", { workdir: "w", query: "x", glob: "[" }],
  ["stat_file", { workdir: "w", path: "link-out/x.txt" }],
  ["stat_file", { workdir: "nope", path: "" }],
  ["list_directory", { workdir: "w", limit: "many" }]
]

describe("resource hygiene of the server process", () => {
  it.scopedLive("no fd leak and no host detail in any text after thousands of calls", () =>
    Effect.flatMap(fixture, ({ tree, mcp }) =>
      Effect.promise(async () => {
        const call = (name: string, args: Record<string, unknown>) =>
          mcp.client.callTool({ name, arguments: args })
        // Warm up so lazily opened handles (ripgrep binary lookup, etc.) are already there.
        for (const [name, args] of FAILING) await call(name, args)
        const before = fdCount(mcp.pid)
        const texts: string[] = []
        for (let round = 0; round < 110; round++) {
          for (const [name, args] of FAILING) {
            if (name === "search_text" && round % 10 !== 0) continue
            const result = await call(name, args)
            expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
            // A reserved name the caller sent may be echoed back; one the server made up may not.
            if (round === 0 && !JSON.stringify(args).includes(".serverfs-tmp-")) texts.push(textOf(result))
          }
          await call("read_text_file", { workdir: "w", path: "docs/readme.md" })
          await call("list_directory", { workdir: "w", path: "docs" })
          await call("find_files", { workdir: "w", pattern: "*.md" })
        }
        // Descriptors of the last call may close just after its answer.
        await eventuallyAsync(
          "the descriptor count back",
          async () => fdCount(mcp.pid) === before || undefined,
          1_000
        ).catch(() => undefined)
        expect(fdCount(mcp.pid)).toBe(before)

        const inodes = [tree.root, `${tree.root}/docs/readme.md`, `${tree.root}/bin.dat`].map((p) =>
          String(fs.statSync(p).ino)
        )
        const everything = [...texts, ...mcp.stderrLines()]
        for (const text of everything) {
          expect(text).not.toContain(tree.base)
          expect(text).not.toContain("/tmp")
          expect(text).not.toContain("/etc/hostname")
          for (const ino of inodes) expect(text).not.toMatch(new RegExp(`\\b${ino}\\b`))
        }
        for (const text of texts) {
          expect(errorCodeOf(text)).toBeDefined()
          expect(text).not.toContain("0123456789abcdef")
          expect(text).not.toMatch(/\buid\b|\bgid\b/)
        }
      })
    )
  )
})
