/**
 * A Claude file-change approval shows the change (issue 15 item 2): the real Claude Code CLI
 * (fake Messages API) through serverfs-mcp and the bridge. Write of a new file is an add diffed
 * against empty; Edit is its old_string → new_string hunk; Write over an existing file is diffed
 * against the file read through the workdir-safe path, and a large one is cut visibly; the
 * content leaves `tool_input`; no host path anywhere the client looks.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { textReply, toolUseReply, waitForStatus } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClaudeStack, finished, ok, startClaudeStack, submitWhenFree } from "./support.js"

let cs: ClaudeStack

beforeAll(async () => {
  cs = await startClaudeStack("sfc-diff-")
}, 120_000)

afterAll(async () => {
  await cs?.stop()
})

const client = () => cs.stack.client
const root = () => cs.stack.tree.root

interface Pending {
  readonly request_id: string
  readonly payload: Record<string, unknown>
}

const pendingOf = async (taskId: string): Promise<Pending> =>
  (await waitForStatus(client(), taskId, ["waiting_for_approval"], 60_000)).pending_request as Pending

const answer = (taskId: string, pending: Pending, decision: string) =>
  ok(client(), "respond_agent_approval", { task_id: taskId, request_id: pending.request_id, decision })

const noHostPath = (payload: unknown) => {
  const json = JSON.stringify(payload)
  expect(json).not.toContain(cs.stack.tree.base)
  expect(json).not.toContain(path.basename(cs.stack.tree.base))
}

describe("Claude file-change approvals carry the change", () => {
  it("Write of a new file: an add, diffed against empty", async () => {
    cs.server.clear()
    const file = path.join(root(), "docs", "new.md")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    cs.server.queue([
      toolUseReply("Write", { file_path: file, content: `# New\nsee ${root()}/docs\n` }),
      textReply("written")
    ])
    const { taskId } = await submitWhenFree(client(), "Write docs/new.md")
    const pending = await pendingOf(taskId)
    expect(pending.payload).toMatchObject({
      category: "file_change",
      tool: "Write",
      tool_input: { file_path: "docs/new.md" },
      file_changes: [
        {
          path: "docs/new.md",
          kind: "add",
          diff: "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# New\n+see docs\n"
        }
      ]
    })
    expect(pending.payload.tool_input).not.toHaveProperty("content")
    noHostPath(pending.payload)
    await answer(taskId, pending, "approve_once")
    expect((await finished(client(), taskId)).status).toBe("succeeded")
    expect(fs.readFileSync(file, "utf8")).toBe(`# New\nsee ${root()}/docs\n`)
  })

  it("Edit: the old_string → new_string hunk", async () => {
    cs.server.clear()
    const file = path.join(root(), "edit.txt")
    fs.writeFileSync(file, "alpha\nbeta\ngamma\n")
    cs.server.queue([
      toolUseReply("Read", { file_path: file }),
      toolUseReply("Edit", { file_path: file, old_string: "beta\n", new_string: "BETA\nbeta two\n" }),
      textReply("edited")
    ])
    const { taskId } = await submitWhenFree(client(), "Edit edit.txt")
    const pending = await pendingOf(taskId)
    expect(pending.payload).toMatchObject({
      category: "file_change",
      tool: "Edit",
      tool_input: { file_path: "edit.txt" },
      file_changes: [
        {
          path: "edit.txt",
          kind: "update",
          diff: "--- a/edit.txt\n+++ b/edit.txt\n@@ -1 +1,2 @@\n-beta\n+BETA\n+beta two\n"
        }
      ]
    })
    noHostPath(pending.payload)
    await answer(taskId, pending, "approve_once")
    expect((await finished(client(), taskId)).status).toBe("succeeded")
    expect(fs.readFileSync(file, "utf8")).toBe("alpha\nBETA\nbeta two\ngamma\n")
  })

  it("Write over an existing file: diffed against it; larger than the bound, cut visibly; deny keeps it", async () => {
    cs.server.clear()
    const file = path.join(root(), "big.txt")
    fs.writeFileSync(file, "first\nsecond\n")
    const content = Array.from({ length: 3000 }, (_, i) => `line ${i} é\n`).join("")
    cs.server.queue([
      toolUseReply("Read", { file_path: file }),
      toolUseReply("Write", { file_path: file, content }),
      textReply("understood")
    ])
    const { taskId } = await submitWhenFree(client(), "Rewrite big.txt")
    const pending = await pendingOf(taskId)
    const [change] = pending.payload.file_changes as ReadonlyArray<Record<string, unknown>>
    expect(change).toMatchObject({ path: "big.txt", kind: "update", diff_truncated: true })
    const diff = String(change?.diff)
    expect(Buffer.byteLength(diff, "utf8")).toBeLessThanOrEqual(16_384)
    expect(diff).toMatch(
      /^--- a\/big\.txt\n\+\+\+ b\/big\.txt\n@@ -1,2 \+1,3000 @@\n-first\n-second\n\+line 0 é\n/
    )
    expect(diff).toMatch(/\n… \[diff truncated: \d+ more bytes\]\n$/)
    expect(pending.payload.tool_input).toEqual({ file_path: "big.txt" })
    noHostPath(pending.payload)
    await answer(taskId, pending, "deny")
    expect((await finished(client(), taskId)).status).toBe("succeeded")
    expect(fs.readFileSync(file, "utf8")).toBe("first\nsecond\n")
  })

  it("no host path in anything the client received", () => {
    for (const text of cs.stack.received()) expect(text).not.toContain(cs.stack.tree.base)
  })
})
