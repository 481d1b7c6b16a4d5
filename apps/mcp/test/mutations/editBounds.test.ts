/**
 * Hostile edit_text_file calls against the real `serverfs-mcp` process over stdio (issue 14,
 * items 2 and 3): each ends with its code within seconds, the process survives (one of them
 * used to kill it), and list_workdirs keeps being answered during the longest edit one call
 * can ask for at the default limits.
 */
import fs from "node:fs"
import path from "node:path"
import {
  errorCodeOf,
  type McpProcess,
  makeTempTree,
  startMcp,
  type TempTree,
  textOf
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const MILLION_A = "a".repeat(1_000_000)

let tree: TempTree
let mcp: McpProcess

beforeAll(async () => {
  tree = makeTempTree("serverfs-mut-bounds-")
  mcp = await startMcp({
    WORKDIR_01_ALIAS: "rw",
    WORKDIR_01_PATH: tree.root,
    WORKDIR_01_READ_ONLY: "false"
  })
})

afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const call = (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })

const revisionOf = async (p: string): Promise<string> => {
  const stat = await call("stat_file", { workdir: "rw", path: p })
  return String((stat.structuredContent as { revision: string }).revision)
}

const bigFile = async (name: string): Promise<string> => {
  fs.writeFileSync(path.join(tree.root, name), MILLION_A)
  return revisionOf(name)
}

const edit = async (name: string, edits: ReadonlyArray<Record<string, unknown>>) =>
  call("edit_text_file", { workdir: "rw", path: name, expected_revision: await revisionOf(name), edits })

/** The process still answers, and the file is untouched. */
const stillServing = async (name: string) => {
  const listed = await call("list_workdirs", {})
  expect(listed.isError ?? false).toBe(false)
  expect(fs.readFileSync(path.join(tree.root, name), "utf8")).toBe(MILLION_A)
}

describe("hostile edits over stdio", () => {
  it("401 bytes of edits asking for a 200 MB, then a 40 GB text → WRITE_TOO_LARGE; the server lives on", async () => {
    await bigFile("grow.txt")
    const result = await edit("grow.txt", [
      { old_text: "a", new_text: "b".repeat(200), expected_count: 1_000_000 },
      { old_text: "b", new_text: "b", expected_count: 200_000_000 }
    ])
    expect(result.isError).toBe(true)
    expect(errorCodeOf(textOf(result))).toBe("WRITE_TOO_LARGE")
    await stillServing("grow.txt")
  })

  it("a 500 kB needle that never matches a million 'a' → EDIT_CONFLICT within seconds", async () => {
    await bigFile("needle.txt")
    const result = await edit("needle.txt", [
      { old_text: `${"a".repeat(250_000)}b${"a".repeat(249_999)}`, new_text: "" }
    ])
    expect(textOf(result)).toBe("EDIT_CONFLICT: rw:needle.txt — expected 1 occurrence(s), found 0")
    await stillServing("needle.txt")
  })

  it("list_workdirs keeps being answered while 50 edits of a million matches each run", async () => {
    await bigFile("swaps.txt")
    const swaps = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0
        ? { old_text: "a", new_text: "b", expected_count: 1_000_000 }
        : { old_text: "b", new_text: "a", expected_count: 1_000_000 }
    )
    const revision = await revisionOf("swaps.txt")
    let editing = true
    const edited = call("edit_text_file", {
      workdir: "rw",
      path: "swaps.txt",
      expected_revision: revision,
      edits: swaps
    }).finally(() => {
      editing = false
    })
    // One list_workdirs after another until the edit has answered. The steps of an edit yield
    // to the event loop, so many are answered meanwhile; a call that kept the loop for its
    // whole duration would let through only the one that arrived before its planning started.
    let answeredDuringEdit = 0
    while (editing) {
      const listed = await call("list_workdirs", {})
      expect(listed.isError ?? false).toBe(false)
      if (editing) answeredDuringEdit++
    }
    const result = await edited
    expect(result.isError ?? false, textOf(result)).toBe(false)
    expect(answeredDuringEdit).toBeGreaterThanOrEqual(5)
    expect(fs.readFileSync(path.join(tree.root, "swaps.txt"), "utf8")).toBe(MILLION_A)
  })
})
