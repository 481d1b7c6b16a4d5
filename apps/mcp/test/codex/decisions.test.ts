/**
 * Every decision Codex honours reaches the chat (issue 15 items 1, 4 and the "must show" list):
 * a real MCP SDK client → `serverfs-mcp` → `serverfs-bridge` → one `codex app-server` child per
 * task (SERVERFS_CODEX_TRANSPORT=stdio, the pinned binary) → a loopback fake Responses API.
 * - deny of a command Codex lists without `decline`: the command does not run, the model's next
 *   request says it was declined, the task goes on to succeed;
 * - approve_session: the identical second command is not asked again;
 * - permission requests (`item/permissions/requestApproval`): approve and deny;
 * - the app-server child (read from /proc while it runs) holds no SERVERFS_* / WORKDIR_* variable
 *   although the bridge's own environment is full of them.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  environmentsWith,
  type FakeReply,
  type FakeResponsesServer,
  makeCodexHome,
  type RecordedRequest,
  readAllEvents,
  serverFsNames,
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
  stack = await startAgentStack({
    prefix: "sfx-codex-decisions-",
    env: () => codexStackEnv(home, "stdio")
  })
}, 120_000)

afterAll(() => stopStdioStack(stack, home, server), 60_000)

beforeEach(() => {
  server.reset()
})

const ALL = ["approve_once", "approve_session", "deny", "cancel_task"]

const respond = (taskId: string, requestId: string, decision: string, granted: ReadonlyArray<string> = []) =>
  ok(stack.client, "respond_agent_approval", {
    task_id: taskId,
    request_id: requestId,
    decision,
    ...(granted.length === 0 ? {} : { granted_permission_ids: granted })
  })

const echoLastOutput =
  () =>
  (request: RecordedRequest): FakeReply => ({
    type: "message",
    text: request.toolOutputs.at(-1)?.output ?? ""
  })

describe("Codex decisions through serverfs-mcp and the bridge (stdio app-server)", () => {
  it("deny: the command does not run, the model is told it was declined, the task succeeds", async () => {
    server.script(
      { type: "shell", command: `touch ${stack.tree.root}/denied.txt`, escalate: "Create denied.txt" },
      (request) => ({ type: "message", text: `model saw: ${request.toolOutputs.at(-1)?.output ?? ""}` })
    )
    const taskId = await submitCodex(stack.client, "Create a marker")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.payload).toMatchObject({ category: "command", relative_cwd: "", available_decisions: ALL })
    // The bridge's own environment is full of SERVERFS_* / WORKDIR_*; the running child has none.
    const children = environmentsWith("CODEX_HOME", home.path)
    expect(children.length).toBeGreaterThan(0)
    for (const env of children) expect(serverFsNames(env)).toEqual([])
    await respond(taskId, pending.request_id, "deny")
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(task.final_response).toMatch(/^model saw: .*rejected by user/)
    expect(fs.existsSync(path.join(stack.tree.root, "denied.txt"))).toBe(false)
    expect(server.requests().at(-1)?.toolOutputs.at(-1)?.output).toMatch(/rejected by user/)
    const events = await readAllEvents(stack.client, taskId)
    expect(events.find((e) => e.event_type === "approval.resolved")?.payload).toMatchObject({
      decision: "deny"
    })
    const command = events.find(
      (e) => e.event_type === "item.completed" && e.payload.type === "commandExecution"
    )
    expect(command?.payload).toMatchObject({ status: "declined", cwd: "" })
  })

  it("approve_session: the identical second command is not asked again", async () => {
    server.script(
      { type: "shell", command: "touch session.txt", escalate: "first" },
      { type: "shell", command: "touch session.txt", escalate: "second" },
      { type: "message", text: "twice" }
    )
    const taskId = await submitCodex(stack.client, "twice")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.payload.available_decisions).toEqual(ALL)
    await respond(taskId, pending.request_id, "approve_session")
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(task.final_response).toBe("twice")
    const events = await readAllEvents(stack.client, taskId)
    expect(events.filter((e) => e.event_type === "approval.requested")).toHaveLength(1)
    expect(
      events
        .filter((e) => e.event_type === "item.completed" && e.payload.type === "commandExecution")
        .map((e) => e.payload.status)
    ).toEqual(["completed", "completed"])
    expect(fs.existsSync(path.join(stack.tree.root, "session.txt"))).toBe(true)
  })

  it("permission request: approve_session grants what was asked for the session", async () => {
    server.script(
      { type: "permissions", reason: "Fetch deps", permissions: { network: { enabled: true } } },
      echoLastOutput()
    )
    const taskId = await submitCodex(stack.client, "deps")
    const pending = await pendingOf(stack.client, taskId)
    expect(pending.payload).toMatchObject({
      category: "provider_permission",
      reason: "Fetch deps",
      relative_cwd: "",
      available_decisions: ALL
    })
    await respond(taskId, pending.request_id, "approve_session")
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(JSON.parse(task.final_response as string)).toEqual({
      permissions: { network: { enabled: true }, file_system: null },
      scope: "session"
    })
  })

  it("permission request: deny grants nothing and the task goes on", async () => {
    server.script(
      {
        type: "permissions",
        reason: "Write outside",
        permissions: { network: { enabled: true }, file_system: { write: [stack.tree.outside] } }
      },
      echoLastOutput()
    )
    const taskId = await submitCodex(stack.client, "outside")
    const pending = await pendingOf(stack.client, taskId)
    expect(JSON.stringify(pending.payload)).not.toContain(stack.tree.outside)
    await respond(taskId, pending.request_id, "deny")
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(JSON.parse(task.final_response as string)).toMatchObject({
      permissions: { network: null, file_system: null }
    })
  })
})
