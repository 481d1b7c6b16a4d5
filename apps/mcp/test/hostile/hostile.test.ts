import * as fs from "node:fs"
import * as path from "node:path"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  errorCodeOf,
  type McpProcess,
  makeTempTree,
  startMcp,
  type TempTree,
  textOf
} from "@serverfs/testkit"
import { Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BYSTANDER_BOUND_MS, peakRss, type SharedServer, startSharedServer, underAttack } from "./support.js"

/**
 * Issue 14's reproductions, each as an attack on a live server: the hostile call must end
 * within its bound with its code (or a bounded, correct answer), and `list_workdirs` asked at
 * the same moment on the same connection and on a second client of the same server must be
 * answered before the hostile call ends (or, when it is quick, within a few seconds anyway).
 * The same calls then go to the real `serverfs-mcp` process over stdio, whose peak memory must
 * stay bounded and which must still answer afterwards.
 */
const LONG_NAME = "quarterly-financial-report-2024-final-version.txt"
const BACKTRACKING = "*?*?*?*?*?*?*?*?*?*?*?*?Z"
const MIB = 1024 * 1024
/** Peak RSS a bounded server stays under through every attack (the unbounded edit took 2.6 GB). */
const PEAK_RSS_BOUND = 768 * MIB
/** Every hostile call ends within this: its bounds, not the attacker, decide how long it runs. */
const HOSTILE_BOUND_MS = 20_000
/** A hostile call at least this long must have let the bystanders through while it ran. */
const LONG_CALL_MS = 500

let tree: TempTree
let rw: string
let shared: SharedServer
let stdio: McpProcess

const env = (): Record<string, string> => ({
  WORKDIR_01_ALIAS: "ro",
  WORKDIR_01_PATH: tree.root,
  WORKDIR_02_ALIAS: "rw",
  WORKDIR_02_PATH: rw,
  WORKDIR_02_READ_ONLY: "false"
})

beforeAll(async () => {
  tree = makeTempTree("serverfs-hostile-")
  tree.file(LONG_NAME, "quarterly numbers\n")
  // 40 text lines, then a 50 GB hole: costs no disk, reads as NUL bytes forever.
  const sparse = tree.file("logs/sparse.log", `${"a line of an ordinary log file, forty-ish\n".repeat(40)}`)
  fs.truncateSync(sparse, 50 * 1024 ** 3)
  // Minified bundles: one 1 MiB line each, all matching the query.
  for (let i = 1; i <= 6; i++) tree.file(`minified/bundle-${i}.js`, `${"x".repeat(MIB - 16)}needle${i}\n`)
  tree.file("long-line/twenty.txt", `needle${"y".repeat(20 * MIB)}\n`)
  tree.file("long-line/fifty.txt", `${"z".repeat(50_000_000)}needle\n`)
  const many = tree.dir("many")
  for (let i = 0; i < 200_000; i++) fs.closeSync(fs.openSync(path.join(many, `entry-${i}`), "w"))
  rw = path.join(tree.base, "rw")
  fs.mkdirSync(rw)
  fs.writeFileSync(path.join(rw, "big.txt"), "a".repeat(1_000_000))
  shared = await startSharedServer(env())
  stdio = await startMcp(env())
}, 120_000)

afterAll(async () => {
  await shared?.close()
  await stdio?.close()
  tree?.remove()
})

type Call = (client: Client) => Promise<unknown>

/**
 * A bystander is answered within a few seconds, and — when the hostile call runs long enough
 * for the difference to mean something — before it ends: a server that blocked its event loop
 * for the hostile call's whole run would answer the bystander only afterwards.
 */
const expectAnsweredMeanwhile = (bystanderAt: number, hostileAt: number): void => {
  expect(bystanderAt).toBeLessThan(BYSTANDER_BOUND_MS)
  if (hostileAt > LONG_CALL_MS) expect(bystanderAt).toBeLessThan(hostileAt)
}

const tool =
  (name: string, args: Record<string, unknown>): Call =>
  (client) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })

const listWorkdirs = tool("list_workdirs", {})

const revisionOf = async (client: Client, file: string): Promise<string> => {
  const result = await client.callTool({ name: "stat_file", arguments: { workdir: "rw", path: file } })
  return (result.structuredContent as { revision: string }).revision
}

/**
 * Runs `hostile` on the first shared client with bystanders on both shared clients, checks
 * liveness, and returns the hostile call's result.
 */
const attack = async (hostile: Call): Promise<unknown> => {
  const [first, second] = shared.clients as [Client, Client]
  const outcome = await underAttack(
    () => hostile(first),
    [() => listWorkdirs(first), () => listWorkdirs(second)]
  )
  expect(outcome.hostile.at).toBeLessThan(HOSTILE_BOUND_MS)
  for (const bystander of outcome.bystanders) {
    expect(Exit.isSuccess(bystander.exit)).toBe(true)
    expectAnsweredMeanwhile(bystander.at, outcome.hostile.at)
  }
  if (Exit.isFailure(outcome.hostile.exit)) throw outcome.hostile.exit.cause
  return outcome.hostile.exit.value
}

const codeOf = (result: unknown): string | undefined =>
  (result as { isError?: boolean }).isError === true ? errorCodeOf(textOf(result)) : undefined

describe("one hostile call cannot stall the server (shared by two clients)", () => {
  it("find_files with a backtracking pattern answers at once, correctly", async () => {
    const none = await attack(tool("find_files", { workdir: "ro", pattern: BACKTRACKING }))
    expect(codeOf(none)).toBeUndefined()
    expect((none as { structuredContent: { matches: unknown[] } }).structuredContent.matches).toEqual([])
    const some = await attack(tool("find_files", { workdir: "ro", pattern: BACKTRACKING.replace("Z", "t") }))
    expect((some as { structuredContent: { matches: unknown[] } }).structuredContent.matches).toEqual([
      { path: LONG_NAME }
    ])
  })

  it("an edit that would grow the text past the write limit → WRITE_TOO_LARGE, nothing built", async () => {
    const [client] = shared.clients as [Client]
    const expected_revision = await revisionOf(client, "big.txt")
    const result = await attack(
      tool("edit_text_file", {
        workdir: "rw",
        path: "big.txt",
        expected_revision,
        edits: [
          { old_text: "a", new_text: "b".repeat(200), expected_count: 1_000_000 },
          { old_text: "b", new_text: "b", expected_count: 200_000_000 }
        ]
      })
    )
    expect(codeOf(result)).toBe("WRITE_TOO_LARGE")
    expect(fs.readFileSync(path.join(rw, "big.txt"), "utf8")).toBe("a".repeat(1_000_000))
  })

  it("an edit whose old_text defeats naive search ends in linear time → EDIT_CONFLICT", async () => {
    const [client] = shared.clients as [Client]
    const expected_revision = await revisionOf(client, "big.txt")
    const result = await attack(
      tool("edit_text_file", {
        workdir: "rw",
        path: "big.txt",
        expected_revision,
        edits: [
          { old_text: `${"a".repeat(250_000)}b${"a".repeat(249_999)}`, new_text: "", expected_count: 1 }
        ]
      })
    )
    expect(codeOf(result)).toBe("EDIT_CONFLICT")
  })

  it("read_text_file far past a 50 GB hole → READ_LIMIT_EXCEEDED", async () => {
    const result = await attack(
      tool("read_text_file", { workdir: "ro", path: "logs/sparse.log", start_line: 1_000_000 })
    )
    expect(codeOf(result)).toBe("READ_LIMIT_EXCEEDED")
  })

  it("the resource of the same file is refused within its budget", async () => {
    const [first, second] = shared.clients as [Client, Client]
    const outcome = await underAttack(
      () => first.readResource({ uri: "serverfs://ro/logs/sparse.log" }),
      [() => listWorkdirs(first), () => listWorkdirs(second)]
    )
    expect(outcome.hostile.at).toBeLessThan(HOSTILE_BOUND_MS)
    expect(Exit.isFailure(outcome.hostile.exit)).toBe(true)
    expect(String(Exit.isFailure(outcome.hostile.exit) ? outcome.hostile.exit.cause : "")).toMatch(
      /LINE_TOO_LARGE|RESOURCE_TOO_LARGE|READ_LIMIT_EXCEEDED/
    )
    for (const bystander of outcome.bystanders) expectAnsweredMeanwhile(bystander.at, outcome.hostile.at)
  })

  it("search_text over six 1 MiB lines answers within the response budget, lines previewed", async () => {
    const result = (await attack(
      tool("search_text", { workdir: "ro", path: "minified", query: "needle" })
    )) as {
      structuredContent: { matches: Array<{ path: string; text: string }>; returned: number }
      content: Array<{ text: string }>
    }
    expect(codeOf(result)).toBeUndefined()
    const matches = result.structuredContent.matches
    expect(matches.length).toBeGreaterThan(0)
    for (const match of matches) expect(Buffer.byteLength(match.text)).toBeLessThan(64 * 1024)
    // Well under the SDK client's 10 MiB message limit, both encodings included.
    expect(JSON.stringify(result).length).toBeLessThan(4 * MIB)
  })

  it("search_text matching a 20 MB and a 50 MB line parses them in linear time", async () => {
    const result = (await attack(
      tool("search_text", { workdir: "ro", path: "long-line", query: "needle" })
    )) as {
      structuredContent: { matches: Array<{ path: string }> }
    }
    expect(codeOf(result)).toBeUndefined()
    expect(result.structuredContent.matches.map((m) => m.path).sort()).toEqual([
      "long-line/fifty.txt",
      "long-line/twenty.txt"
    ])
  })

  it("list_directory of 200,000 entries does not hold the other calls", async () => {
    const result = (await attack(tool("list_directory", { workdir: "ro", path: "many", limit: 100 }))) as {
      structuredContent: { returned: number; has_more: boolean }
    }
    expect(result.structuredContent.returned).toBe(100)
    expect(result.structuredContent.has_more).toBe(true)
  })

  it("twenty such listings at once do not hold the other calls", async () => {
    const result = (await attack((client) =>
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          tool("list_directory", { workdir: "ro", path: "many", offset: i * 1000, limit: 10 })(client)
        )
      )
    )) as Array<{ structuredContent: { returned: number } }>
    for (const listing of result) expect(listing.structuredContent.returned).toBe(10)
  })

  it("find_files walking 200,000 entries does not hold the other calls", async () => {
    const result = (await attack(
      tool("find_files", { workdir: "ro", path: "many", pattern: "*-199999" })
    )) as {
      structuredContent: { matches: unknown[] }
    }
    expect(codeOf(result)).toBeUndefined()
  })
})

describe("the real serverfs-mcp process under the same attacks", () => {
  it("answers each with its code, keeps its memory bounded, and still serves afterwards", async () => {
    const call = (name: string, args: Record<string, unknown>) =>
      stdio.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
    const stat = await call("stat_file", { workdir: "rw", path: "big.txt" })
    const expected_revision = (stat.structuredContent as { revision: string }).revision
    const attacks: Array<[string, Record<string, unknown>, string | undefined]> = [
      ["find_files", { workdir: "ro", pattern: BACKTRACKING }, undefined],
      [
        "edit_text_file",
        {
          workdir: "rw",
          path: "big.txt",
          expected_revision,
          edits: [
            { old_text: "a", new_text: "b".repeat(200), expected_count: 1_000_000 },
            { old_text: "b", new_text: "b", expected_count: 200_000_000 }
          ]
        },
        "WRITE_TOO_LARGE"
      ],
      [
        "edit_text_file",
        {
          workdir: "rw",
          path: "big.txt",
          expected_revision,
          edits: [
            { old_text: `${"a".repeat(250_000)}b${"a".repeat(249_999)}`, new_text: "", expected_count: 1 }
          ]
        },
        "EDIT_CONFLICT"
      ],
      [
        "read_text_file",
        { workdir: "ro", path: "logs/sparse.log", start_line: 1_000_000 },
        "READ_LIMIT_EXCEEDED"
      ],
      ["search_text", { workdir: "ro", path: "minified", query: "needle" }, undefined],
      ["search_text", { workdir: "ro", path: "long-line", query: "needle" }, undefined],
      ["list_directory", { workdir: "ro", path: "many", limit: 100 }, undefined]
    ]
    for (const [name, args, code] of attacks) {
      const started = performance.now()
      const result = await call(name, args)
      expect({ name, code: codeOf(result) }).toEqual({ name, code })
      expect(performance.now() - started).toBeLessThan(HOSTILE_BOUND_MS)
    }
    const after = await call("list_workdirs", {})
    expect(codeOf(after)).toBeUndefined()
    expect(peakRss(stdio.pid)).toBeLessThan(PEAK_RSS_BOUND)
  })
})
