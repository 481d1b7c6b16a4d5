import * as fs from "node:fs"
import {
  errorCodeOf,
  type McpProcess,
  makeTempTree,
  startMcp,
  type TempTree,
  textOf
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * issue 14: the response budget (SERVERFS_MAX_RESPONSE_BYTES) is enforced once in the call
 * pipeline, for every tool and for the resource; over it the answer is RESPONSE_TOO_LARGE with
 * one audit line, and the server goes on answering. Against the real process over stdio.
 */
let tree: TempTree
let mcp: McpProcess

const BUDGET = 65536

beforeAll(async () => {
  tree = makeTempTree()
  // One page of 40,000 bytes: its result encodes to more than 64 KiB (text + structuredContent).
  tree.file("wide.txt", `${"w".repeat(199)}\n`.repeat(200))
  // 70,000 bytes in one page (under 500 lines): over the budget even encoded once.
  tree.file("wider.txt", `${"w".repeat(199)}\n`.repeat(350))
  tree.file("small.txt", "hello\n")
  mcp = await startMcp({
    WORKDIR_01_ALIAS: "main",
    WORKDIR_01_PATH: tree.root,
    SERVERFS_MAX_RESPONSE_BYTES: String(BUDGET)
  })
})

afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const call = (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })

describe("the response budget", () => {
  it("a read whose result exceeds SERVERFS_MAX_RESPONSE_BYTES → RESPONSE_TOO_LARGE, audited, server alive", async () => {
    const result = await call("read_text_file", { workdir: "main", path: "wide.txt" })
    expect(result.isError).toBe(true)
    expect(errorCodeOf(textOf(result))).toBe("RESPONSE_TOO_LARGE")
    expect(textOf(result)).toContain(`${BUDGET} bytes`)
    expect(result.structuredContent).toBeUndefined()
    const records = await mcp.auditWhen((r) => r.some((l) => l.error_code === "RESPONSE_TOO_LARGE"))
    const line = records.find((l) => l.error_code === "RESPONSE_TOO_LARGE")
    expect(line).toMatchObject({ tool: "read_text_file", success: false, path: "wide.txt" })
    // The same call with fewer lines fits.
    const page = await call("read_text_file", { workdir: "main", path: "wide.txt", max_lines: 20 })
    expect(page.isError).toBeFalsy()
    const workdirs = await call("list_workdirs", {})
    expect(workdirs.isError).toBeFalsy()
  })

  it("the resource has the same budget → RESPONSE_TOO_LARGE", async () => {
    await expect(mcp.client.readResource({ uri: "serverfs://main/wider.txt" })).rejects.toThrow(
      /RESPONSE_TOO_LARGE/
    )
    const small = await mcp.client.readResource({ uri: "serverfs://main/small.txt" })
    expect(small.contents[0]).toMatchObject({ text: "hello\n" })
  })
})

describe("search_text over stdio with the default budget", () => {
  let wide: TempTree
  let server: McpProcess

  beforeAll(async () => {
    wide = makeTempTree()
    // Six minified bundles of one 1 MiB line each: once a response of over 10 MiB that made
    // the SDK client close the connection and the server exit.
    for (let i = 0; i < 6; i++)
      wide.file(`dist/bundle${i}.min.js`, `var needle=1;${"x".repeat(1024 * 1024)}\n`)
    server = await startMcp({ WORKDIR_01_ALIAS: "main", WORKDIR_01_PATH: wide.root })
  })

  afterAll(async () => {
    await server?.close()
    wide?.remove()
  })

  it("six 1 MiB matched lines → six previews marked text_truncated; the connection stays up", async () => {
    const result = await server.client.callTool({
      name: "search_text",
      arguments: { workdir: "main", query: "needle" }
    })
    expect(result.isError).toBeFalsy()
    const output = result.structuredContent as {
      matches: Array<{ text: string; text_truncated?: boolean }>
      returned: number
      truncated: boolean
    }
    expect(output.returned).toBe(6)
    for (const m of output.matches) {
      expect(m.text_truncated).toBe(true)
      expect(m.text.startsWith("var needle=1;")).toBe(true)
    }
    expect(JSON.stringify(result).length).toBeLessThan(256 * 1024)
    const workdirs = await server.client.callTool({ name: "list_workdirs", arguments: {} })
    expect(workdirs.isError).toBeFalsy()
  })
})

describe("a hostile read does not hold the server", () => {
  let sparse: TempTree
  let server: McpProcess

  beforeAll(async () => {
    sparse = makeTempTree()
    // 40 text lines, then a 50 GB hole (no disk used): once 59 s of a frozen server.
    sparse.file(
      "sparse.log",
      Array.from({ length: 40 }, (_, i) => `${`line ${i + 1} `.padEnd(39, "-")}\n`).join("")
    )
    fs.truncateSync(`${sparse.root}/sparse.log`, 50 * 1024 ** 3)
    server = await startMcp({
      WORKDIR_01_ALIAS: "main",
      WORKDIR_01_PATH: sparse.root,
      SERVERFS_MAX_READ_SCAN_BYTES: String(64 * 1024 ** 3),
      SERVERFS_READ_TIMEOUT_SECONDS: "3"
    })
  })

  afterAll(async () => {
    await server?.close()
    sparse?.remove()
  })

  it("a large start_line on a sparse 50 GB file → READ_LIMIT_EXCEEDED; list_workdirs is answered meanwhile", async () => {
    let readDone = false
    const hostile = server.client
      .callTool({
        name: "read_text_file",
        arguments: { workdir: "main", path: "sparse.log", start_line: 1_000_000 }
      })
      .finally(() => {
        readDone = true
      })
    const workdirs = await server.client.callTool({ name: "list_workdirs", arguments: {} })
    expect(workdirs.isError).toBeFalsy()
    expect(readDone).toBe(false)
    const result = await hostile
    expect(errorCodeOf(textOf(result))).toBe("READ_LIMIT_EXCEEDED")
    expect(textOf(result)).toContain("exceeded 3s")
  })
})
