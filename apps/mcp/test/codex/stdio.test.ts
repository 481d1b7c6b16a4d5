/**
 * Codex end to end with SERVERFS_CODEX_TRANSPORT=stdio: the bridge owns one `codex app-server`
 * child per task (the pinned binary, a test CODEX_HOME, a loopback fake Responses API). The main
 * path through serverfs-mcp: a plain answer, an approval answered through the agent tools while
 * the lease refuses a concurrent mutation, a continuation in a new child, a cancel that stops the
 * child; no host path reaches the client; no child outlives the stack.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  type FakeResponsesServer,
  makeCodexHome,
  processesMentioning,
  readAllEvents,
  startAgentStack,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  call,
  codexStackEnv,
  eventually,
  expectStatus,
  fails,
  ok,
  pendingOf,
  stopStdioStack,
  submitCodex
} from "./support.js"

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack
const taskIds: string[] = []

beforeAll(async () => {
  server = await startFakeResponsesServer()
  home = makeCodexHome({ baseUrl: server.baseUrl })
  stack = await startAgentStack({
    prefix: "sfx-codex-stdio-",
    env: () => codexStackEnv(home, "stdio")
  })
}, 120_000)

afterAll(() => stopStdioStack(stack, home, server), 60_000)

beforeEach(() => {
  server.reset()
})

const submit = async (prompt: string, extra: Record<string, unknown> = {}) => {
  const taskId = await submitCodex(stack.client, prompt, extra)
  taskIds.push(taskId)
  return taskId
}

describe("Codex through serverfs-mcp and the bridge (stdio app-server)", () => {
  it("the runtime is listed from `codex --version`; a plain task succeeds", async () => {
    const runtimes = await ok(stack.client, "list_agent_runtimes")
    expect(runtimes.runtimes).toMatchObject([
      { name: "codex", available: true, version: "0.171.0", in_flight_recovery: "session-resume" }
    ])
    server.script({ type: "message", text: "hello from stdio" })
    const taskId = await submit("hi")
    expect((await expectStatus(stack.client, taskId, "succeeded")).final_response).toBe("hello from stdio")
  })

  it("approval through respond_agent_approval; WORKDIR_BUSY meanwhile; continue in a new child", async () => {
    server.script(
      { type: "shell", command: `echo ok > ${stack.tree.root}/stdio.txt`, escalate: "write stdio.txt" },
      { type: "message", text: "wrote it" },
      { type: "message", text: "still the same thread" }
    )
    const taskId = await submit("write a file")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.payload.command_display).toBe("/bin/bash -lc 'echo ok > stdio.txt'")
    const busy = await call(stack.client, "create_text_file", {
      workdir: "main",
      path: "x.txt",
      content: "x"
    })
    expect(busy.content?.[0]?.text).toMatch(/^WORKDIR_BUSY/)
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once"
    })
    expect((await expectStatus(stack.client, taskId, "succeeded")).final_response).toBe("wrote it")
    expect(fs.readFileSync(path.join(stack.tree.root, "stdio.txt"), "utf8")).toBe("ok\n")
    const next = await submit("and now?", { continue_from_task_id: taskId })
    expect((await expectStatus(stack.client, next, "succeeded")).final_response).toBe("still the same thread")
    expect(JSON.stringify(server.requests().at(-1)?.body.input)).toContain("write a file")
  })

  it("cancel mid-stream: cancelled at once, the child stops, the lease is released", async () => {
    server.script({ type: "slow", text: "x", ticks: 400, intervalMs: 50 })
    const taskId = await submit("long")
    await server.waitFor((r) => r.replied === "slow", "the slow stream")
    expect((await ok(stack.client, "cancel_agent_task", { task_id: taskId })).status).toBe("cancelled")
    await server.waitFor((r) => r.aborted, "the model stream closed")
    await eventually("the lease released", async () => {
      const result = await call(stack.client, "create_text_file", {
        workdir: "main",
        path: "y.txt",
        content: "y"
      })
      return result.isError === true ? undefined : true
    })
    // serverfs-mcp and the bridge carry SERVERFS_CODEX_HOME in their environment; nothing else may.
    const children = () =>
      processesMentioning(home.path).filter((pid) => pid !== stack.bridge.pid && pid !== stack.mcp.pid)
    await eventually("the child gone", async () => (children().length === 0 ? true : undefined))
    const refused = await fails(stack.client, "send_agent_message", { task_id: taskId, message: "late" })
    expect(refused.code).toBe("AGENT_TASK_TERMINAL")
  })

  it("no host path in anything the client received", async () => {
    for (const taskId of taskIds) await readAllEvents(stack.client, taskId)
    for (const text of stack.received()) {
      expect(text).not.toContain(stack.tree.base)
      expect(text).not.toContain(home.path)
    }
  })
})
