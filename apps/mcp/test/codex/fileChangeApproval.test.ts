/**
 * A Codex file-change approval shows the change (issue 15 item 2): the real `codex` app-server
 * (stdio transport, a read-only sandbox so that every apply_patch in the workdir asks) driven by
 * the fake Responses API, through serverfs-mcp and the bridge. The approval's `file_changes`
 * carry a unified diff per change (an add against /dev/null, an update as Codex's hunks) with
 * workdir-relative paths; a change over the bound is cut visibly; no host path anywhere.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  type FakeResponsesServer,
  makeCodexHome,
  startAgentStack,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { codexStackEnv, expectStatus, ok, pendingOf, stopStdioStack, submitCodex } from "./support.js"

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack

beforeAll(async () => {
  server = await startFakeResponsesServer()
  home = makeCodexHome({ baseUrl: server.baseUrl })
  // Read-only: a patch inside the workdir needs the human's approval too.
  const config = fs.readFileSync(home.configPath, "utf8")
  fs.writeFileSync(
    home.configPath,
    config.replace('sandbox_mode = "workspace-write"', 'sandbox_mode = "read-only"')
  )
  stack = await startAgentStack({
    prefix: "sfx-codex-diff-",
    env: () => codexStackEnv(home, "stdio")
  })
}, 120_000)

afterAll(() => stopStdioStack(stack, home, server), 60_000)

beforeEach(() => {
  server.reset()
})

interface Change {
  readonly path: string
  readonly kind?: string
  readonly diff?: string
  readonly diff_truncated?: boolean
}

const changesOf = (payload: Record<string, unknown>) => payload.file_changes as ReadonlyArray<Change>

describe("Codex file-change approvals carry the change", () => {
  it("an add and an update in one patch: a unified diff each, workdir-relative", async () => {
    const root = stack.tree.root
    fs.mkdirSync(path.join(root, "src"), { recursive: true })
    fs.writeFileSync(path.join(root, "src/app.txt"), "one\ntwo\nthree\n")
    server.script(
      {
        type: "patch",
        patch: [
          "*** Begin Patch",
          `*** Add File: ${root}/notes.md`,
          "+# Notes",
          `+see ${root}/src/app.txt`,
          `*** Update File: ${root}/src/app.txt`,
          "@@",
          " one",
          "-two",
          "+TWO",
          " three",
          "*** End Patch",
          ""
        ].join("\n")
      },
      { type: "message", text: "patched" }
    )
    const taskId = await submitCodex(stack.client, "patch two files")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.payload).toMatchObject({ category: "file_change", title: "Codex wants to change files" })
    const changes = [...changesOf(pending.payload)].sort((a, b) => a.path.localeCompare(b.path))
    expect(changes).toEqual([
      {
        path: "notes.md",
        kind: "add",
        diff: "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+# Notes\n+see src/app.txt\n"
      },
      {
        path: "src/app.txt",
        kind: "update",
        diff: expect.stringMatching(
          /^--- a\/src\/app\.txt\n\+\+\+ b\/src\/app\.txt\n@@ [^\n]* @@\n(.*\n)*-two\n\+TWO\n/
        )
      }
    ])
    const json = JSON.stringify(pending.payload)
    expect(json).not.toContain(stack.tree.base)
    expect(json).not.toContain(path.basename(stack.tree.base))
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once"
    })
    await expectStatus(stack.client, taskId, "succeeded")
    expect(fs.readFileSync(path.join(root, "src/app.txt"), "utf8")).toBe("one\nTWO\nthree\n")
    expect(fs.existsSync(path.join(root, "notes.md"))).toBe(true)
  })

  it("a change larger than the bound is cut visibly; deny keeps it out", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `+line ${i} of a large file`)
    server.script(
      {
        type: "patch",
        patch: ["*** Begin Patch", "*** Add File: big.txt", ...lines, "*** End Patch", ""].join("\n")
      },
      { type: "message", text: "ok" }
    )
    const taskId = await submitCodex(stack.client, "write a big file")
    const pending = await pendingOf(stack.client, taskId)
    const [change] = changesOf(pending.payload)
    expect(change).toMatchObject({ path: "big.txt", kind: "add", diff_truncated: true })
    const diff = change?.diff ?? ""
    expect(Buffer.byteLength(diff, "utf8")).toBeLessThanOrEqual(16_384)
    expect(diff).toMatch(
      /^--- \/dev\/null\n\+\+\+ b\/big\.txt\n@@ -0,0 \+1,3000 @@\n\+line 0 of a large file\n/
    )
    expect(diff).toMatch(/\n… \[diff truncated: \d+ more bytes\]\n$/)
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "deny"
    })
    await expectStatus(stack.client, taskId, "succeeded")
    expect(fs.existsSync(path.join(stack.tree.root, "big.txt"))).toBe(false)
  })

  it("no host path in anything the client received", () => {
    for (const text of stack.received()) {
      expect(text).not.toContain(stack.tree.base)
      expect(text).not.toContain(home.path)
    }
  })
})
