import { makeTempTree, startMcp, type TempTree } from "@serverfs/testkit"
import { afterAll, beforeAll, expect, it } from "vitest"

/** The stdio side of the audit's `transport` field (guards.test.ts checks the http side). */
let tree: TempTree

beforeAll(() => {
  tree = makeTempTree()
  tree.file("a.txt", "alpha\n")
})
afterAll(() => tree?.remove())

it("audits a stdio call with transport stdio", async () => {
  const mcp = await startMcp({ WORKDIR_01_ALIAS: "w", WORKDIR_01_PATH: tree.root })
  try {
    await mcp.client.callTool({ name: "list_workdirs", arguments: {} })
    const records = await mcp.auditWhen((rs) => rs.some((r) => r.event === "tool_call"))
    expect(records.find((r) => r.event === "tool_call")?.transport).toBe("stdio")
  } finally {
    await mcp.close()
  }
}, 60_000)
