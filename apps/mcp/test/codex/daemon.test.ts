/**
 * Codex end to end, as a chat client sees it: a real MCP SDK client → the real `serverfs-mcp` →
 * the real `serverfs-bridge` (WORKDIR_01_AGENT_RUNTIMES=codex) → the official managed Codex
 * app-server daemon of a test CODEX_HOME (the pinned `codex` binary) → a loopback fake of the
 * Responses API, on a real workdir. Approvals and questions are answered through the agent
 * tools; a concurrent MCP mutation is refused by the writer lease; every result and event the
 * client received is scanned for host paths. One daemon serves the file and is killed (with its
 * updater loop and sockets) at the end.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  cleanupCodexDaemon,
  codexBin,
  type FakeResponsesServer,
  killCodexDaemon,
  makeCodexHome,
  processesMentioning,
  readAllEvents,
  startAgentStack,
  startCodexDaemon,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { call, eventually, expectStatus, fails, finished, ok, pendingOf, submitCodex } from "./support.js"

/** Every task of the file, for the final host-path scan of all their events. */
const taskIds: string[] = []
const submit = async (prompt: string, extra: Record<string, unknown> = {}) => {
  const taskId = await submitCodex(stack.client, prompt, extra)
  taskIds.push(taskId)
  return taskId
}

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack

beforeAll(async () => {
  server = await startFakeResponsesServer()
  // The user's native Codex configuration lets the model ask questions outside plan mode;
  // ServerFS itself never selects a collaboration mode.
  home = makeCodexHome({ baseUrl: server.baseUrl, features: { default_mode_request_user_input: true } })
  await startCodexDaemon(home.path)
  stack = await startAgentStack({
    prefix: "sfx-codex-e2e-",
    env: () => ({
      WORKDIR_01_AGENT_RUNTIMES: "codex",
      SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false",
      SERVERFS_CODEX_BIN: codexBin,
      SERVERFS_CODEX_HOME: home.path,
      SERVERFS_CODEX_TRANSPORT: "daemon",
      SERVERFS_CODEX_REQUEST_TIMEOUT_SECONDS: "30"
    })
  })
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  if (home !== undefined) {
    await cleanupCodexDaemon(home.path)
    expect(processesMentioning(home.path)).toEqual([])
    home.remove()
  }
  await server?.close()
}, 60_000)

beforeEach(() => {
  server.reset()
})

const mutate = (name: string) =>
  call(stack.client, "create_text_file", { workdir: "main", path: name, content: "from MCP\n" })

describe("Codex through serverfs-mcp and the bridge (managed daemon)", () => {
  it("list_agent_runtimes shows codex with its tested capabilities; a plain task succeeds", async () => {
    const runtimes = await ok(stack.client, "list_agent_runtimes")
    expect(runtimes.runtimes).toEqual([
      {
        name: "codex",
        available: true,
        version: "0.171.0",
        persistent_session: true,
        live_steer: true,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "native",
        model_override: true,
        model_discovery: "runtime_catalog"
      }
    ])
    server.script({ type: "message", preamble: "Reading.", text: "The repo is tiny." })
    const taskId = await submit("Describe the repo")
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(task.final_response).toBe("The repo is tiny.")
    expect((task.manifest as { runtime: unknown }).runtime).toEqual({
      name: "codex",
      version: "0.171.0",
      in_flight_recovery: "native"
    })
    const events = await readAllEvents(stack.client, taskId)
    expect(events.filter((e) => e.event_type === "agent.message").map((e) => e.payload.text)).toEqual([
      "Reading.",
      "The repo is tiny."
    ])
    expect(events.map((e) => e.event_type)).toContain("turn.started")
  })

  it("review is refused for codex (native mode is workspace-write only)", async () => {
    const refused = await fails(stack.client, "submit_agent_task", {
      runtime: "codex",
      workdir: "main",
      profile: "review",
      prompt: "x"
    })
    expect(refused.code).toBe("AGENT_PROFILE_NOT_ALLOWED")
  })

  it("command approval: relayed without host paths; the lease refuses a concurrent mutation; approve_once", async () => {
    server.script(
      { type: "shell", command: `touch ${stack.tree.root}/approved.txt`, escalate: "Create approved.txt" },
      { type: "message", text: "Created approved.txt" }
    )
    const taskId = await submit("Create a marker")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.kind).toBe("approval")
    expect(pending.payload).toMatchObject({
      category: "command",
      reason: "Create approved.txt",
      command_display: "/bin/bash -lc 'touch approved.txt'",
      relative_cwd: "",
      available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"]
    })
    // The workdir belongs to the agent while the task runs.
    const busy = await mutate("from-mcp.txt")
    expect(busy.isError).toBe(true)
    expect(busy.content?.[0]?.text).toMatch(/^WORKDIR_BUSY/)
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once"
    })
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(task.final_response).toBe("Created approved.txt")
    expect(fs.existsSync(path.join(stack.tree.root, "approved.txt"))).toBe(true)
    const events = await readAllEvents(stack.client, taskId)
    expect(events.map((e) => e.event_type)).toEqual(
      expect.arrayContaining(["approval.requested", "approval.resolved"])
    )
    // Released: the same mutation goes through now.
    await eventually("the lease released", async () =>
      (await mutate("from-mcp.txt")).isError === true ? undefined : true
    )
  })

  it("file-change approval: deny keeps the file out; the model is told", async () => {
    const target = path.join(stack.tree.outside, "patched.txt")
    server.script(
      { type: "patch", patch: `*** Begin Patch\n*** Add File: ${target}\n+x\n*** End Patch\n` },
      (request) => ({ type: "message", text: `model saw: ${request.toolOutputs.at(-1)?.output ?? ""}` })
    )
    const taskId = await submit("Patch outside")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.payload).toEqual({
      category: "file_change",
      title: "Codex wants to change files",
      available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"],
      file_changes: [
        {
          path: "<outside-workdir>",
          kind: "add",
          diff: "--- /dev/null\n+++ b/<outside-workdir>\n@@ -0,0 +1 @@\n+x\n"
        }
      ]
    })
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "deny"
    })
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(task.final_response).toMatch(/^model saw: .*rejected/i)
    expect(fs.existsSync(target)).toBe(false)
  })

  it("permission approval: a narrowed grant (network only, this turn) is what Codex gets", async () => {
    server.script(
      {
        type: "permissions",
        reason: "Download deps",
        permissions: { network: { enabled: true }, file_system: { write: [stack.tree.outside] } }
      },
      (request) => ({ type: "message", text: request.toolOutputs.at(-1)?.output ?? "" })
    )
    const taskId = await submit("deps")
    const pending = await pendingOf(stack.client, taskId)
    const requested = pending.payload.requested_permissions as ReadonlyArray<{ permission_id: string }>
    expect(requested.map((p) => p.permission_id)).toEqual(["network", "fileSystem"])
    const outside = await fails(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once",
      granted_permission_ids: ["root"]
    })
    expect(outside.code).toBe("PERMISSION_OUTSIDE_POLICY")
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once",
      granted_permission_ids: ["network"]
    })
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(JSON.parse(task.final_response as string)).toEqual({
      permissions: { network: { enabled: true }, file_system: null },
      scope: "turn"
    })
  })

  it("question: options and free text through answer_agent_question reach the model", async () => {
    server.script(
      {
        type: "ask",
        questions: [
          {
            id: "db",
            header: "Database",
            question: "Which database?",
            options: [
              { label: "Postgres", description: "relational" },
              { label: "SQLite", description: "embedded" }
            ]
          }
        ]
      },
      (request) => ({ type: "message", text: request.toolOutputs.at(-1)?.output ?? "" })
    )
    const taskId = await submit("set up storage")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.kind).toBe("question")
    expect(pending.payload).toEqual({
      questions: [
        {
          question_id: "db",
          prompt: "Database: Which database?",
          options: [
            { option_id: "opt_0_0", label: "Postgres", description: "relational" },
            { option_id: "opt_0_1", label: "SQLite", description: "embedded" }
          ],
          multi_select: false,
          allow_free_text: true
        }
      ]
    })
    await ok(stack.client, "answer_agent_question", {
      task_id: taskId,
      request_id: pending.request_id,
      answers: [{ question_id: "db", selected_option_ids: ["opt_0_1"], text: "keep it in one file" }]
    })
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(JSON.parse(task.final_response as string)).toEqual({
      answers: { db: { answers: ["SQLite", "keep it in one file"] } }
    })
  })

  it("cancel_task: the task is cancelled and Codex's turn is interrupted; the lease is released", async () => {
    server.script(
      { type: "shell", command: "touch never.txt", escalate: "x" },
      { type: "message", text: "no" }
    )
    const taskId = await submit("do something risky")
    const pending = await pendingOf(stack.client, taskId)
    await ok(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "cancel_task"
    })
    await expectStatus(stack.client, taskId, "cancelled")
    expect(fs.existsSync(path.join(stack.tree.root, "never.txt"))).toBe(false)
    await eventually("the lease released", async () =>
      (await mutate("after-cancel.txt")).isError === true ? undefined : true
    )
    expect(server.requests()).toHaveLength(1)
  })

  it("steer with send_agent_message, then cancel mid-stream (repeat-safe)", async () => {
    server.script({ type: "slow", text: "x", ticks: 400, intervalMs: 50 }, (request) => ({
      type: "message",
      text: `steered: ${request.userTexts.at(-1) ?? ""}`
    }))
    const steered = await submit("long job")
    await server.waitFor((r) => r.replied === "slow", "the slow stream")
    await ok(stack.client, "send_agent_message", { task_id: steered, message: "only the API layer" })
    const done = await expectStatus(stack.client, steered, "succeeded")
    expect(done.final_response).toBe("steered: only the API layer")
    const late = await fails(stack.client, "send_agent_message", { task_id: steered, message: "late" })
    expect(late.code).toBe("AGENT_TASK_TERMINAL")

    server.reset()
    server.script({ type: "slow", text: "x", ticks: 400, intervalMs: 50 })
    const cancelled = await submit("another long job")
    await server.waitFor((r) => r.replied === "slow", "the slow stream")
    expect((await ok(stack.client, "cancel_agent_task", { task_id: cancelled })).status).toBe("cancelled")
    expect((await ok(stack.client, "cancel_agent_task", { task_id: cancelled })).status).toBe("cancelled")
    await server.waitFor((r) => r.aborted, "Codex closing the model stream")
    await eventually("the lease released", async () =>
      (await mutate("after-stop.txt")).isError === true ? undefined : true
    )
  })

  it("continue_from_task_id: the same Codex thread continues with its history", async () => {
    server.script({ type: "message", text: "noted: 42" }, { type: "message", text: "you said 42" })
    const first = await submit("remember 42")
    await expectStatus(stack.client, first, "succeeded")
    const second = await submit("what did I say?", { continue_from_task_id: first })
    const task = await expectStatus(stack.client, second, "succeeded")
    expect(task.final_response).toBe("you said 42")
    expect(task.continue_from_task_id).toBe(first)
    const history = JSON.stringify(server.requests()[1]?.body.input)
    expect(history).toContain("remember 42")
    expect(history).toContain("noted: 42")
  })

  it("provider HTTP failure: the task fails with AGENT_PROVIDER_ERROR", async () => {
    server.script({ type: "http-error", status: 500, message: "upstream exploded" })
    const taskId = await submit("go")
    const task = await expectStatus(stack.client, taskId, "failed")
    expect(task.error_code).toBe("AGENT_PROVIDER_ERROR")
    const events = await readAllEvents(stack.client, taskId)
    expect(events.find((e) => e.event_type === "provider.error")?.payload).toMatchObject({
      will_retry: false
    })
  })

  it("daemon killed and restarted mid-approval: the task is interrupted (session-resume), the request is stale, the thread continues", async () => {
    server.script({ type: "shell", command: "touch lost.txt", escalate: "x" })
    const taskId = await submit("about to be lost")
    const pending = await pendingOf(stack.client, taskId)
    await killCodexDaemon(home.path)
    await startCodexDaemon(home.path)
    const task = await expectStatus(stack.client, taskId, "interrupted")
    expect(task.error_code).toBe("AGENT_PROVIDER_DISCONNECTED")
    const late = await fails(stack.client, "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once"
    })
    expect(late.code).toBe("REQUEST_STALE")
    expect(fs.existsSync(path.join(stack.tree.root, "lost.txt"))).toBe(false)
    await eventually("the lease released", async () =>
      (await mutate("after-restart.txt")).isError === true ? undefined : true
    )
    server.script({ type: "message", text: "back again" })
    const next = await submit("continue", { continue_from_task_id: taskId })
    expect((await finished(stack.client, next)).final_response).toBe("back again")
  })

  it("no host path of the workdir (or of CODEX_HOME) in anything the client received", async () => {
    for (const taskId of taskIds) {
      await readAllEvents(stack.client, taskId)
      await ok(stack.client, "get_agent_task", { task_id: taskId })
    }
    const received = stack.received()
    expect(taskIds.length).toBeGreaterThan(10)
    for (const text of received) {
      expect(text).not.toContain(stack.tree.base)
      expect(text).not.toContain(home.path)
    }
  })
})
