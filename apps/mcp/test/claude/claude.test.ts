/**
 * Claude end to end (spec v0.3 §30 "MCP E2E"): an MCP SDK client → serverfs-mcp → the bridge's
 * Unix socket → the Claude adapter → the real Claude Code CLI (offline, fake Messages API) → a
 * real workdir. Approvals, a question, cancel, steering refused, continuation, the writer lease
 * against a concurrent MCP mutation — and no host path of the workdir in anything the client
 * receives.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  askReply,
  bashReply,
  eventuallyAsync,
  lastToolResults,
  messageTexts,
  readAllEvents,
  textReply,
  toolUseReply,
  waitForStatus
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ClaudeStack,
  eventTypes,
  fails,
  finished,
  ok,
  startClaudeStack,
  submitWhenFree
} from "./support.js"

let cs: ClaudeStack

beforeAll(async () => {
  cs = await startClaudeStack("sfc-e2e-")
})

afterAll(async () => {
  await cs?.stop()
})

const client = () => cs.stack.client
const root = () => cs.stack.tree.root
const empty = { method: "", path: "", headers: {}, body: undefined }

describe("Claude through serverfs-mcp", () => {
  it("lists the claude runtime with its tested capabilities", async () => {
    const { runtimes } = (await ok(client(), "list_agent_runtimes")) as { runtimes: ReadonlyArray<unknown> }
    expect(runtimes).toEqual([
      {
        name: "claude",
        available: true,
        version: "2.1.332",
        persistent_session: true,
        live_steer: false,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "session-resume",
        model_override: true,
        model_discovery: "current_account"
      }
    ])
  })

  it("an approval waits durably while the lease refuses MCP mutations; approve_once writes the file", async () => {
    cs.server.clear()
    const file = path.join(root(), "notes.txt")
    cs.server.queue([
      toolUseReply("Write", { file_path: file, content: "from claude\n" }),
      textReply(`I wrote ${file} for you.`)
    ])
    const { taskId, status } = await submitWhenFree(client(), "Write notes.txt")
    expect(status).toBe("queued")
    const waiting = await waitForStatus(client(), taskId, ["waiting_for_approval"], 60_000)
    const pending = waiting.pending_request as { request_id: string; payload: Record<string, unknown> }
    expect(pending.payload).toMatchObject({
      category: "file_change",
      file_changes: [
        {
          path: "notes.txt",
          kind: "add",
          diff: "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+from claude\n"
        }
      ],
      relative_cwd: "",
      tool: "Write",
      tool_input: { file_path: "notes.txt" }
    })
    expect(pending.payload.available_decisions).toEqual(
      expect.arrayContaining(["approve_once", "deny", "cancel_task"])
    )
    // The writer lease: a concurrent MCP mutation of the same workdir is refused.
    expect(
      (await fails(client(), "create_text_file", { workdir: "main", path: "other.txt", content: "x\n" })).code
    ).toBe("WORKDIR_BUSY")
    await ok(client(), "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "approve_once"
    })
    const done = await finished(client(), taskId)
    expect(done).toMatchObject({
      status: "succeeded",
      final_response: "I wrote <workdir>/notes.txt for you."
    })
    expect(fs.readFileSync(file, "utf8")).toBe("from claude\n")
    const types = await eventTypes(client(), taskId)
    expect(types).toEqual(
      expect.arrayContaining([
        "task.started",
        "turn.started",
        "file_change.started",
        "approval.requested",
        "approval.resolved",
        "file_change.completed",
        "agent.message",
        "task.completed"
      ])
    )
  })

  it("deny: the command does not run and the task still finishes", async () => {
    cs.server.clear()
    cs.server.queue([
      bashReply(`python3 -c "open('denied.txt','w').write('x')"`, "Write"),
      textReply("Understood.")
    ])
    const { taskId } = await submitWhenFree(client(), "Write denied.txt")
    const waiting = await waitForStatus(client(), taskId, ["waiting_for_approval"], 60_000)
    const pending = waiting.pending_request as { request_id: string; payload: Record<string, unknown> }
    expect(pending.payload).toMatchObject({
      category: "command",
      command_display: `python3 -c "open('denied.txt','w').write('x')"`
    })
    await ok(client(), "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "deny"
    })
    expect(await finished(client(), taskId)).toMatchObject({
      status: "succeeded",
      final_response: "Understood."
    })
    expect(fs.existsSync(path.join(root(), "denied.txt"))).toBe(false)
    const [, second] = cs.server.modelRequests()
    expect(lastToolResults(second ?? empty)).toEqual([expect.objectContaining({ isError: true })])
  })

  it("cancel_task on an approval cancels the task; nothing runs", async () => {
    cs.server.clear()
    cs.server.queue([
      bashReply(`python3 -c "open('cancelled.txt','w').write('x')"`, "Write"),
      textReply("never")
    ])
    const { taskId } = await submitWhenFree(client(), "Write cancelled.txt")
    const waiting = await waitForStatus(client(), taskId, ["waiting_for_approval"], 60_000)
    const pending = waiting.pending_request as { request_id: string }
    await ok(client(), "respond_agent_approval", {
      task_id: taskId,
      request_id: pending.request_id,
      decision: "cancel_task"
    })
    expect(await finished(client(), taskId)).toMatchObject({ status: "cancelled" })
    expect(fs.existsSync(path.join(root(), "cancelled.txt"))).toBe(false)
  })

  it("a question with options and free text is answered, and the model sees the answers", async () => {
    cs.server.clear()
    cs.server.queue([
      askReply([
        {
          question: "Which database should we use?",
          header: "Database",
          options: [
            { label: "SQLite", description: "embedded" },
            { label: "Postgres", description: "a server" }
          ],
          multiSelect: false
        }
      ]),
      textReply("SQLite it is.")
    ])
    const { taskId } = await submitWhenFree(client(), "Pick a database with me")
    const waiting = await waitForStatus(client(), taskId, ["waiting_for_question"], 60_000)
    const pending = waiting.pending_request as { request_id: string; payload: Record<string, unknown> }
    expect(pending.payload).toEqual({
      questions: [
        {
          question_id: "q0",
          prompt: "Which database should we use?",
          options: [
            { option_id: "SQLite", label: "SQLite", description: "embedded" },
            { option_id: "Postgres", label: "Postgres", description: "a server" }
          ],
          multi_select: false,
          allow_free_text: true
        }
      ]
    })
    await ok(client(), "answer_agent_question", {
      task_id: taskId,
      request_id: pending.request_id,
      answers: [{ question_id: "q0", selected_option_ids: ["SQLite"], text: "keep it local" }]
    })
    expect(await finished(client(), taskId)).toMatchObject({
      status: "succeeded",
      final_response: "SQLite it is."
    })
    const [, second] = cs.server.modelRequests()
    expect(lastToolResults(second ?? empty)[0]?.text).toContain(
      '"Which database should we use?"="SQLite, keep it local"'
    )
  })

  it("steering is refused with a provider error; cancel stops a streaming task; continue resumes the session", async () => {
    cs.server.clear()
    cs.server.queue([textReply("z".repeat(80), { chunks: 80, chunkDelayMs: 250 })])
    const { taskId } = await submitWhenFree(client(), "Remember the codeword HERON, then talk slowly")
    await waitForStatus(client(), taskId, ["running"], 60_000)
    // Wait for the model request: the CLI is streaming its answer now.
    await eventuallyAsync(
      "the model request",
      async () => cs.server.modelRequests().length > 0 || undefined,
      30_000
    ).catch(() => undefined)
    const steer = await fails(client(), "send_agent_message", { task_id: taskId, message: "focus on tests" })
    expect(steer.code).toBe("AGENT_PROVIDER_ERROR")
    expect(steer.text).toContain("live steering is not enabled")
    const cancelled = await ok(client(), "cancel_agent_task", { task_id: taskId })
    expect(cancelled.status).toBe("cancelled")
    // Repeating it changes nothing.
    expect((await ok(client(), "cancel_agent_task", { task_id: taskId })).status).toBe("cancelled")
    expect((await finished(client(), taskId)).status).toBe("cancelled")

    cs.server.clear()
    cs.server.queue([textReply("The codeword was HERON.")])
    const next = await submitWhenFree(client(), "What was the codeword?", { continue_from_task_id: taskId })
    expect(await finished(client(), next.taskId)).toMatchObject({
      status: "succeeded",
      final_response: "The codeword was HERON."
    })
    const texts = messageTexts(cs.server.modelRequests()[0] ?? empty).join("\n")
    expect(texts).toContain("Remember the codeword HERON")
    expect(texts).toContain("What was the codeword?")
    const events = await readAllEvents(client(), next.taskId)
    expect(events.find((e) => e.event_type === "turn.started")?.payload).toMatchObject({ continued: true })
  })

  it("no host path of the workdir reached the client, in any result or event", async () => {
    // The bridge's log stayed JSON: nothing of the SDK or the CLI leaked onto its stderr.
    for (const line of cs.stack.bridge.stderrLines()) expect(() => JSON.parse(line)).not.toThrow()
    const received = cs.stack.received()
    expect(received.length).toBeGreaterThan(20)
    for (const text of received) {
      expect(text).not.toContain(cs.stack.tree.base)
      expect(text).not.toContain(cs.sandbox.base)
    }
  })
})
