/**
 * The Codex adapter against the real pinned `codex` binary through a stdio `codex app-server`
 * child (SERVERFS_CODEX_TRANSPORT=stdio), offline: the model is a loopback fake of the Responses
 * API scripted per test. Each test has its own CODEX_HOME and workdir; every child is gone
 * after each test.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import {
  type FakeReply,
  type FakeResponsesServer,
  makeCodexHome,
  type RecordedRequest,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { Effect, Fiber } from "effect"
import { CODEX_PROTOCOL_VERSION, makeCodexAdapter } from "../../src/index.js"
import { expectNoProcessesFor, type Fixture, makeFixture, makeTestSink, startTurn } from "./support.js"

let server: FakeResponsesServer
let fx: Fixture

beforeAll(async () => {
  server = await startFakeResponsesServer()
})
afterAll(async () => {
  await server?.close()
})
beforeEach(() => {
  server.reset()
  fx = makeFixture(server, "stdio", { default_mode_request_user_input: true })
})
afterEach(async () => {
  await expectNoProcessesFor(fx.home.path)
  fx.remove()
})

const lastOutput = () => server.requests().at(-1)?.toolOutputs.at(-1)?.output ?? ""

describe("Codex over stdio", () => {
  it.scopedLive("probe reports the CLI version and the tested capabilities without starting anything", () =>
    Effect.gen(function* () {
      const adapter = yield* makeCodexAdapter(fx.options())
      const info = yield* adapter.probe()
      expect(info).toEqual({
        name: "codex",
        available: true,
        version: CODEX_PROTOCOL_VERSION,
        persistent_session: true,
        live_steer: true,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "session-resume",
        model_override: true,
        model_discovery: "runtime_catalog"
      })
      expect(adapter.inFlightRecovery).toBe("session-resume")
      expect(server.requests()).toHaveLength(0)
      const missing = yield* makeCodexAdapter(fx.options({ bin: path.join(fx.base, "no-such-codex") }))
      expect(yield* missing.probe()).toMatchObject({ name: "codex", available: false })
    })
  )

  it.scopedLive(
    "plain answer: native ids recorded, the task cwd used, completed messages only, final_answer wins",
    () =>
      Effect.gen(function* () {
        server.script({ type: "message", preamble: "Looking around first.", text: "All good." })
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const sub = path.join(fx.workdir, "sub")
        const turn = yield* startTurn(
          adapter,
          fx.request("t-plain", "Summarize the repo", { cwd: sub }),
          test.sink
        )
        const outcome = yield* turn.outcome
        expect(outcome.finalText).toBe("All good.")
        expect(test.ids.sessionId).toMatch(/^[0-9a-f-]{36}$/)
        expect(test.ids.turnId).toMatch(/^[0-9a-f-]{36}$/)
        expect(test.events.filter((e) => e.type === "agent.message").map((e) => e.payload)).toEqual([
          { text: "Looking around first.", phase: "commentary" },
          { text: "All good.", phase: "final_answer" }
        ])
        expect(test.eventTypes()[0]).toBe("turn.started")
        // The model saw the prompt, in the task's cwd (workdir + relative path).
        const seen = server.requests()[0]
        expect(seen?.userTexts.at(-1)).toBe("Summarize the repo")
        expect(seen?.userTexts.join("\n")).toContain(`<cwd>${sub}</cwd>`)
        expect(seen?.headers.originator).toBe("serverfs-agent-bridge")
      })
  )

  it.scopedLive("review is refused before anything starts (Codex native mode is workspace-write only)", () =>
    Effect.gen(function* () {
      const adapter = yield* makeCodexAdapter(fx.options())
      const test = yield* makeTestSink
      const error = yield* Effect.flip(
        adapter.run(fx.request("t-review", "x", { profile: "review" }), test.sink)
      )
      expect(error._tag).toBe("AGENT_PROFILE_NOT_ALLOWED")
      expect(server.requests()).toHaveLength(0)
      expect(test.events).toHaveLength(0)
    })
  )

  it.scopedLive(
    "command approval, approve_once: relayed with the workdir redacted, accepted, the command runs",
    () =>
      Effect.gen(function* () {
        server.script(
          { type: "shell", command: `touch ${fx.workdir}/approved.txt`, escalate: "Create the marker file" },
          { type: "message", text: "Created." }
        )
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-accept", "make a marker"), test.sink)
        const approval = yield* test.nextApproval
        expect(approval.payload).toMatchObject({
          category: "command",
          reason: "Create the marker file",
          command_display: "/bin/bash -lc 'touch approved.txt'",
          relative_cwd: ""
        })
        // Codex 0.171 lists accept, an execpolicy amendment (never exposed) and cancel here; it
        // honours decline and acceptForSession too (decisions.test.ts), so all four are offered.
        expect(approval.payload.available_decisions).toEqual([
          "approve_once",
          "approve_session",
          "deny",
          "cancel_task"
        ])
        expect(JSON.stringify(approval.payload)).not.toContain(fx.workdir)
        yield* approval.answer({ decision: "approve_once", granted_permission_ids: [] })
        expect((yield* turn.outcome).finalText).toBe("Created.")
        expect(fs.existsSync(path.join(fx.workdir, "approved.txt"))).toBe(true)
        const commands = test.events.filter(
          (e) => e.type === "item.completed" && e.payload.type === "commandExecution"
        )
        expect(commands.map((e) => e.payload)).toEqual([
          {
            type: "commandExecution",
            command: "/bin/bash -lc 'touch approved.txt'",
            cwd: "",
            status: "completed",
            exit_code: 0
          }
        ])
      })
  )

  it.scopedLive("command approval, deny: declined, the model is told, the turn goes on", () =>
    Effect.gen(function* () {
      server.script({ type: "shell", command: "touch denied.txt", escalate: "Create a file" }, (request) => ({
        type: "message",
        text: `model saw: ${request.toolOutputs.at(-1)?.output ?? "nothing"}`
      }))
      const adapter = yield* makeCodexAdapter(fx.options())
      const test = yield* makeTestSink
      const turn = yield* startTurn(adapter, fx.request("t-deny", "try it"), test.sink)
      const approval = yield* test.nextApproval
      yield* approval.answer({ decision: "deny", granted_permission_ids: [] })
      const outcome = yield* turn.outcome
      expect(outcome.finalText).toMatch(/^model saw: .*rejected by user/)
      expect(fs.existsSync(path.join(fx.workdir, "denied.txt"))).toBe(false)
    })
  )

  it.scopedLive(
    "command approval, approve_session: acceptForSession, the same command is not asked again",
    () =>
      Effect.gen(function* () {
        server.script(
          { type: "shell", command: "touch session.txt", escalate: "first" },
          { type: "shell", command: "touch session.txt", escalate: "second" },
          { type: "message", text: "twice" }
        )
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-session", "twice"), test.sink)
        const approval = yield* test.nextApproval
        yield* approval.answer({ decision: "approve_session", granted_permission_ids: [] })
        expect((yield* turn.outcome).finalText).toBe("twice")
        expect(test.approvalCount()).toBe(1)
        expect(
          server
            .requests()
            .at(-1)
            ?.toolOutputs.map((o) => o.output.includes("exited with code 0"))
        ).toEqual([true, true])
      })
  )

  it.scopedLive(
    "command approval, cancel_task: cancel → Codex interrupts the turn; the bridge then ends the run",
    () =>
      Effect.gen(function* () {
        server.script(
          { type: "shell", command: "touch never.txt", escalate: "x" },
          { type: "message", text: "no" }
        )
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-cancel", "x"), test.sink)
        const approval = yield* test.nextApproval
        yield* approval.answer({ decision: "cancel_task", granted_permission_ids: [] })
        expect((yield* test.waitForEvent("turn.interrupted")).payload).toEqual({ requested_by: "serverfs" })
        // What the bridge does after cancel_task: cancel the provider (repeat-safe), stop the run.
        yield* adapter.cancel("t-cancel")
        yield* adapter.cancel("t-cancel")
        yield* Fiber.interrupt(turn.fiber)
        expect(fs.existsSync(path.join(fx.workdir, "never.txt"))).toBe(false)
        expect(server.requests()).toHaveLength(1)
      })
  )

  it.scopedLive(
    "file-change approval: paths outside the workdir shown as <outside-workdir>; accept applies",
    () =>
      Effect.gen(function* () {
        const target = path.join(fx.outside, "patched.txt")
        server.script(
          { type: "patch", patch: `*** Begin Patch\n*** Add File: ${target}\n+hello\n*** End Patch\n` },
          { type: "message", text: "patched" }
        )
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-patch", "patch it"), test.sink)
        const approval = yield* test.nextApproval
        expect(approval.payload).toEqual({
          category: "file_change",
          title: "Codex wants to change files",
          available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"],
          file_changes: [
            {
              path: "<outside-workdir>",
              kind: "add",
              diff: "--- /dev/null\n+++ b/<outside-workdir>\n@@ -0,0 +1 @@\n+hello\n"
            }
          ]
        })
        yield* approval.answer({ decision: "approve_once", granted_permission_ids: [] })
        expect((yield* turn.outcome).finalText).toBe("patched")
        expect(fs.readFileSync(target, "utf8")).toBe("hello\n")
        const change = test.events.find((e) => e.type === "item.completed" && e.payload.type === "fileChange")
        expect(change?.payload).toEqual({
          type: "fileChange",
          status: "completed",
          changes: [{ path: "<outside-workdir>", kind: "add" }]
        })
      })
  )

  it.scopedLive("file-change approval: deny leaves the file alone", () =>
    Effect.gen(function* () {
      const target = path.join(fx.outside, "refused.txt")
      server.script(
        { type: "patch", patch: `*** Begin Patch\n*** Add File: ${target}\n+no\n*** End Patch\n` },
        (request) => ({ type: "message", text: `saw ${request.toolOutputs.at(-1)?.output ?? ""}` })
      )
      const adapter = yield* makeCodexAdapter(fx.options())
      const test = yield* makeTestSink
      const turn = yield* startTurn(adapter, fx.request("t-patch-deny", "patch it"), test.sink)
      yield* Effect.flatMap(test.nextApproval, (a) =>
        a.answer({ decision: "deny", granted_permission_ids: [] })
      )
      expect((yield* turn.outcome).finalText).toMatch(/rejected/i)
      expect(fs.existsSync(target)).toBe(false)
    })
  )

  it.scopedLive(
    "permission approval: categories selectable, a narrowed grant reaches the model with turn scope",
    () =>
      Effect.gen(function* () {
        server.script(
          {
            type: "permissions",
            reason: "Fetch dependencies",
            permissions: { network: { enabled: true }, file_system: { write: [fx.outside] } }
          },
          (request) => ({ type: "message", text: request.toolOutputs.at(-1)?.output ?? "" })
        )
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-perm", "deps"), test.sink)
        const approval = yield* test.nextApproval
        expect(approval.payload).toMatchObject({
          category: "provider_permission",
          reason: "Fetch dependencies",
          relative_cwd: "",
          available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"]
        })
        expect(approval.payload.requested_permissions?.map((p) => [p.permission_id, p.kind])).toEqual([
          ["network", "network"],
          ["fileSystem", "file_system"]
        ])
        expect(JSON.stringify(approval.payload)).not.toContain(fx.outside)
        yield* approval.answer({ decision: "approve_once", granted_permission_ids: ["network"] })
        const granted = JSON.parse((yield* turn.outcome).finalText) as Record<string, unknown>
        expect(granted).toEqual({
          permissions: { network: { enabled: true }, file_system: null },
          scope: "turn"
        })
      })
  )

  it.scopedLive(
    "permission approval: approve_session without narrowing grants all with session scope; deny grants none",
    () =>
      Effect.gen(function* () {
        const ask = {
          type: "permissions",
          reason: "again",
          permissions: { network: { enabled: true } }
        } as const
        const echo = () => ({ type: "message", text: lastOutput() }) as const
        server.script(ask, echo)
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const first = yield* startTurn(adapter, fx.request("t-perm-s", "a"), test.sink)
        yield* Effect.flatMap(test.nextApproval, (a) =>
          a.answer({ decision: "approve_session", granted_permission_ids: [] })
        )
        yield* first.outcome
        expect(JSON.parse(lastOutput())).toEqual({
          permissions: { network: { enabled: true }, file_system: null },
          scope: "session"
        })
        server.reset()
        server.script(
          { ...ask, permissions: { network: { enabled: true }, file_system: { read: [fx.outside] } } },
          echo
        )
        const second = yield* startTurn(adapter, fx.request("t-perm-d", "b"), test.sink)
        yield* Effect.flatMap(test.nextApproval, (a) =>
          a.answer({ decision: "deny", granted_permission_ids: [] })
        )
        yield* second.outcome
        expect(JSON.parse(lastOutput())).toMatchObject({ permissions: { network: null, file_system: null } })
      })
  )

  it.scopedLive(
    "user input in plan mode: a question with options and free text; the answer reaches the model",
    () =>
      Effect.gen(function* () {
        server.script(
          {
            type: "ask",
            questions: [
              {
                id: "color",
                header: "Color",
                question: "Which color?",
                options: [
                  { label: "Blue", description: "calm" },
                  { label: "Red", description: "loud" }
                ]
              }
            ]
          },
          (request) => ({ type: "message", text: request.toolOutputs.at(-1)?.output ?? "" })
        )
        const adapter = yield* makeCodexAdapter(fx.options({ collaborationMode: "plan" }))
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-ask", "pick"), test.sink)
        const question = yield* test.nextQuestion
        expect(question.payload).toEqual({
          questions: [
            {
              question_id: "color",
              prompt: "Color: Which color?",
              options: [
                { option_id: "opt_0_0", label: "Blue", description: "calm" },
                { option_id: "opt_0_1", label: "Red", description: "loud" }
              ],
              multi_select: false,
              allow_free_text: true
            }
          ]
        })
        yield* question.answer({
          answers: [{ question_id: "color", selected_option_ids: ["opt_0_1"], text: "darker" }]
        })
        expect(JSON.parse((yield* turn.outcome).finalText)).toEqual({
          answers: { color: { answers: ["Red", "darker"] } }
        })
        // The plan-mode turn/start carried the collaboration mode (the model saw plan instructions).
        expect(JSON.stringify(server.requests()[0]?.body)).toMatch(/plan/i)
      })
  )

  it.scopedLive(
    "steer mid-stream: turn/steer aborts the stream and the model re-samples with the message",
    () =>
      Effect.gen(function* () {
        server.script({ type: "slow", text: "never finished", ticks: 400, intervalMs: 50 }, (request) => ({
          type: "message",
          text: `steered by: ${request.userTexts.at(-1) ?? ""}`
        }))
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const steerBefore = yield* Effect.flip(adapter.steer("t-steer", "too early"))
        expect(steerBefore._tag).toBe("AGENT_TASK_NOT_ACTIVE")
        const turn = yield* startTurn(adapter, fx.request("t-steer", "long job"), test.sink)
        yield* Effect.promise(() => server.waitFor((r) => r.replied === "slow", "the slow stream"))
        yield* adapter.steer("t-steer", "only touch the API layer")
        expect((yield* turn.outcome).finalText).toBe("steered by: only touch the API layer")
        const [first, second] = server.requests()
        expect(first?.index).toBe(0)
        yield* Effect.promise(() =>
          server.waitFor((r) => r.index === 0 && r.aborted, "the first stream closed")
        )
        expect(second?.userTexts.slice(-2)).toEqual(["long job", "only touch the API layer"])
        const after = yield* Effect.flip(adapter.steer("t-steer", "late"))
        expect(after._tag).toBe("AGENT_TASK_NOT_ACTIVE")
      })
  )

  it.scopedLive(
    "interrupt: cancel sends turn/interrupt (repeat-safe); the stream is closed; the thread is resumable",
    () =>
      Effect.gen(function* () {
        server.script({ type: "slow", text: "never", ticks: 400, intervalMs: 50 })
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-int", "long"), test.sink)
        yield* Effect.promise(() => server.waitFor((r) => r.replied === "slow", "the slow stream"))
        yield* adapter.cancel("t-int")
        yield* test.waitForEvent("turn.interrupted")
        yield* adapter.cancel("t-int")
        yield* Fiber.interrupt(turn.fiber)
        yield* adapter.cancel("t-int")
        yield* Effect.promise(() => server.waitFor((r) => r.index === 0 && r.aborted, "the stream closed"))
        const reconciled = yield* adapter.reconcile({
          taskId: "t-int",
          sessionId: test.ids.sessionId ?? null,
          turnId: test.ids.turnId ?? null
        })
        expect(reconciled).toMatchObject({ status: "SESSION_RESUMABLE", providerActive: false })
      })
  )

  it.scopedLive(
    "continue from a finished task: a new app-server process resumes the thread and starts a turn",
    () =>
      Effect.gen(function* () {
        server.script({ type: "message", text: "first answer" }, { type: "message", text: "second answer" })
        const adapter = yield* makeCodexAdapter(fx.options())
        const first = yield* makeTestSink
        yield* Effect.flatMap(
          startTurn(adapter, fx.request("t-one", "remember 42"), first.sink),
          (t) => t.outcome
        )
        const second = yield* makeTestSink
        const sessionId = first.ids.sessionId ?? "missing"
        const outcome = yield* Effect.flatMap(
          startTurn(adapter, fx.request("t-two", "what did I say?", { resume: { sessionId } }), second.sink),
          (t) => t.outcome
        )
        expect(outcome.finalText).toBe("second answer")
        expect(second.ids.sessionId).toBe(sessionId)
        expect(second.ids.turnId).not.toBe(first.ids.turnId)
        expect(second.events[0]).toEqual({ type: "turn.started", payload: { continued: true } })
        // The history came along: the second model request holds the first exchange.
        const input = JSON.stringify(server.requests()[1]?.body.input)
        expect(input).toContain("remember 42")
        expect(input).toContain("first answer")
        const unknown = yield* Effect.flip(
          adapter.run(
            fx.request("t-three", "x", { resume: { sessionId: "00000000-0000-0000-0000-000000000000" } }),
            second.sink
          )
        )
        expect(unknown._tag).toBe("AGENT_SESSION_NOT_RESUMABLE")
      })
  )

  it.scopedLive(
    "provider HTTP failure: the turn fails with AGENT_PROVIDER_ERROR and a provider.error event, no host path",
    () =>
      Effect.gen(function* () {
        server.script({ type: "http-error", status: 500, message: `exploded in ${fx.workdir}` })
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-500", "go"), test.sink)
        const error = yield* turn.failure
        expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
        expect(error.message.length).toBeGreaterThan(0)
        expect(error.message).not.toContain(fx.base)
        const reported = test.events.find((e) => e.type === "provider.error")
        expect(reported?.payload).toMatchObject({ will_retry: false })
        expect(JSON.stringify(test.events)).not.toContain(fx.base)
      })
  )

  it.scopedLive(
    "provider failure naming the workdir, a home directory and a temp path: the AgentError message has none of them",
    () =>
      Effect.gen(function* () {
        const home = path.join(os.homedir(), ".codex", "auth.json")
        const temp = path.join(os.tmpdir(), "codex-41", "app-server.sock")
        server.script({
          type: "http-error",
          status: 400,
          message: `bad request in ${fx.workdir}/src, see ${home} and ${temp}`
        })
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-400", "go"), test.sink)
        const error = yield* turn.failure
        expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
        expect(error.message).toContain("bad request in <workdir>/src, see <path> and <path>")
        for (const leak of [fx.workdir, os.homedir(), os.tmpdir()]) expect(error.message).not.toContain(leak)
      })
  )

  it.scopedLive("an unsupported server request (MCP elicitation) is declined at once; the turn goes on", () =>
    Effect.gen(function* () {
      const mcpServer = path.join(import.meta.dirname, "fixtures", "elicit-server.mjs")
      const parent = path.join(fx.base, "mcp")
      fs.mkdirSync(parent)
      // An unknown model slug: MCP tools are offered directly instead of behind tool_search.
      const home = makeCodexHome({
        baseUrl: server.baseUrl,
        parent,
        model: "fake-model",
        extraToml: `[mcp_servers.elicit]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(mcpServer)}]\n`
      })
      // Codex may sample before the MCP server is up: until the tool is offered, the "model"
      // waits a little with a harmless command, then calls it once, then reports what it saw.
      let called = false
      const step = (request: RecordedRequest): FakeReply => {
        if (called) return { type: "message", text: `model saw: ${request.toolOutputs.at(-1)?.output ?? ""}` }
        if (!request.toolNames.includes("mcp__elicit")) return { type: "shell", command: "sleep 0.3" }
        called = true
        return { type: "call", name: "ask_user", namespace: "mcp__elicit", arguments: {} }
      }
      server.script(...Array.from({ length: 40 }, () => step))
      const adapter = yield* makeCodexAdapter(fx.options({ codexHome: home.path }))
      const test = yield* makeTestSink
      const outcome = yield* Effect.flatMap(
        startTurn(adapter, fx.request("t-mcp", "use the tool"), test.sink),
        (t) => t.outcome
      )
      expect(outcome.finalText).toMatch(/^model saw: .*rejected MCP tool call/s)
      expect(test.events.find((e) => e.type === "provider.request_declined")?.payload).toEqual({
        method: "mcpServer/elicitation/request",
        reason: "ServerFS does not support the Codex request mcpServer/elicitation/request"
      })
      expect(test.approvalCount() + test.questionCount()).toBe(0)
      yield* Effect.promise(() => expectNoProcessesFor(home.path))
      yield* Effect.promise(() => expectNoProcessesFor(mcpServer))
    })
  )

  it.scopedLive(
    "reconcile: no thread recorded → NOT_RECOVERABLE; a finished turn → SESSION_RESUMABLE, inactive",
    () =>
      Effect.gen(function* () {
        server.script({ type: "message", text: "ok" })
        const adapter = yield* makeCodexAdapter(fx.options())
        expect(
          yield* adapter.reconcile({ taskId: "never-ran", sessionId: null, turnId: null })
        ).toMatchObject({
          status: "NOT_RECOVERABLE",
          providerActive: null
        })
        const test = yield* makeTestSink
        yield* Effect.flatMap(startTurn(adapter, fx.request("t-rec", "go"), test.sink), (t) => t.outcome)
        expect(
          yield* adapter.reconcile({ taskId: "t-rec", sessionId: test.ids.sessionId ?? null, turnId: null })
        ).toMatchObject({ status: "SESSION_RESUMABLE", providerActive: false })
      })
  )
})
