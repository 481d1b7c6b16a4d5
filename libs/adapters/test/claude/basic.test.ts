/**
 * The Claude adapter on the real Claude Code CLI, offline: probe, a plain answer with the native
 * environment (settings sources, Claude Code system prompt, the user's own permission mode), a
 * provider error, and steering refused.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bundledClaudeBinary, httpErrorReply, textReply } from "@serverfs/testkit"
import { Effect, Either, type Scope } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { makeClaudeAdapter } from "../../src/index.js"
import {
  type ClaudeFixture,
  expectFailure,
  expectSuccess,
  makeRecording,
  runTurn,
  startClaudeFixture,
  waitUntil
} from "./support.js"

let fx: ClaudeFixture

/** Run with an adapter made for this effect only (its scope closes with it). */
const runScoped = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

beforeAll(async () => {
  fx = await startClaudeFixture()
})

beforeEach(() => {
  fx.server.clear()
})

afterAll(async () => {
  await fx?.close()
})

describe("Claude adapter: probe", () => {
  it("reports the installed CLI's version and tested capabilities without starting a session", async () => {
    const info = await Effect.runPromise(fx.adapter.probe())
    expect(info).toEqual({
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
    })
    expect(fx.server.requests()).toEqual([])
    expect(fx.adapter.inFlightRecovery).toBe("session-resume")
  })

  it("looks a command name up on PATH, and reports a missing CLI as unavailable", async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "sfc-bin-"))
    try {
      fs.symlinkSync(bundledClaudeBinary(), path.join(bin, "claude"))
      const onPath = await runScoped(
        Effect.flatMap(
          makeClaudeAdapter({
            claudeBin: "claude",
            useBundledCli: false,
            probeTimeoutSeconds: 10,
            environment: { ...fx.sandbox.env, PATH: `${bin}:/usr/bin:/bin` }
          }),
          (a) => a.probe()
        )
      )
      expect(onPath).toMatchObject({ available: true, version: "2.1.332" })
      const bundled = await runScoped(
        Effect.flatMap(
          makeClaudeAdapter({
            claudeBin: "claude-not-installed",
            useBundledCli: true,
            probeTimeoutSeconds: 10,
            environment: { ...fx.sandbox.env, PATH: "/usr/bin:/bin" }
          }),
          (a) => a.probe()
        )
      )
      expect(bundled).toMatchObject({ available: true, version: "2.1.332" })
      const missing = makeClaudeAdapter({
        claudeBin: "claude-not-installed",
        useBundledCli: false,
        probeTimeoutSeconds: 10,
        environment: { ...fx.sandbox.env, PATH: `${bin}:/usr/bin:/bin` }
      })
      expect(await runScoped(Effect.flatMap(missing, (a) => a.probe()))).toEqual({
        name: "claude",
        available: false,
        detail: "the Claude Code CLI (SERVERFS_CLAUDE_BIN) was not found"
      })
      const run = await runScoped(
        Effect.either(Effect.flatMap(missing, (a) => a.run(fx.request("hello"), makeRecording().sink)))
      )
      expect(Either.isLeft(run) && run.left._tag).toBe("AGENT_RUNTIME_UNAVAILABLE")
    } finally {
      fs.rmSync(bin, { recursive: true, force: true })
    }
  })
})

describe("Claude adapter: a plain turn", () => {
  it("answers, records the session, and runs in the native Claude Code context", async () => {
    fx.server.queue([textReply("The answer is 42.")])
    const rec = makeRecording()
    const request = fx.request("What is six times seven?")
    const text = expectSuccess(await runTurn(fx.adapter, request, rec))
    expect(text).toBe("The answer is 42.")
    // Session id from system/init, and the CLI's process identity for reconciliation.
    expect(rec.ids.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(rec.ids.turnId).toMatch(/^cli:\d+:\d+$/)
    expect(rec.events.map((e) => e.type)).toEqual(["turn.started", "agent.message"])
    expect(rec.events[0]?.payload).toEqual({ permission_mode: "default", claude_code_version: "2.1.332" })
    expect(rec.events[1]?.payload).toEqual({ text: "The answer is 42." })
    // What the model was sent: Claude Code's own system prompt and tools, the prompt.
    const [first] = fx.server.modelRequests()
    expect(JSON.stringify(first?.body?.system)).toContain("Claude Code")
    expect(first?.body?.tools?.map((t) => t.name)).toEqual(
      expect.arrayContaining(["Bash", "AskUserQuestion"])
    )
    expect(JSON.stringify(first?.body?.messages)).toContain("What is six times seven?")
    // Only the Messages API was called.
    expect(fx.server.requests().every((r) => r.path.startsWith("/v1/messages"))).toBe(true)
    // Reconcile after a turn that ended here: proven stopped, resumable.
    expect(
      await Effect.runPromise(
        fx.adapter.reconcile({ taskId: request.taskId, sessionId: rec.ids.sessionId ?? null, turnId: null })
      )
    ).toMatchObject({ status: "SESSION_RESUMABLE", providerActive: false })
  })

  it("keeps the user's configured permission mode (no ServerFS override)", async () => {
    fs.writeFileSync(fx.sandbox.userSettings, JSON.stringify({ permissions: { defaultMode: "acceptEdits" } }))
    try {
      fx.server.queue([textReply("ok")])
      const rec = makeRecording()
      expectSuccess(await runTurn(fx.adapter, fx.request("hi"), rec))
      expect(rec.events[0]?.payload.permission_mode).toBe("acceptEdits")
    } finally {
      fs.rmSync(fx.sandbox.userSettings)
    }
  })

  it("keeps TMPDIR: no messaging socket or temp dir of the CLI outside the sandbox", async () => {
    fx.server.queue([textReply("ok")])
    expectSuccess(await runTurn(fx.adapter, fx.request("hi"), makeRecording()))
    expect(fs.readdirSync(fx.sandbox.tmpDir)).toEqual(expect.arrayContaining(["cc-socks"]))
  })

  it("turns an API error into AGENT_PROVIDER_ERROR with a path-free message", async () => {
    fx.server.script(() => httpErrorReply(400, "invalid_request_error", "prompt is malformed"))
    const rec = makeRecording()
    const error = expectFailure(await runTurn(fx.adapter, fx.request("hello"), rec))
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(error.message).toContain("prompt is malformed")
    expect(error.message).not.toContain(fx.sandbox.base)
  })

  it("a provider failure naming the workdir, a home directory and a temp path: the AgentError message has none of them", async () => {
    const request = fx.request("hello")
    const home = path.join(os.homedir(), ".claude", "settings.json")
    const temp = path.join(os.tmpdir(), "claude-7", "stdin.fifo")
    fx.server.script(() =>
      httpErrorReply(
        400,
        "invalid_request_error",
        `bad request in ${request.workdirRoot}/src, see ${home} and ${temp}`
      )
    )
    const error = expectFailure(await runTurn(fx.adapter, request, makeRecording()))
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(error.message).toContain("bad request in <workdir>/src, see <path> and <path>")
    for (const leak of [request.workdirRoot, os.homedir(), os.tmpdir()])
      expect(error.message).not.toContain(leak)
  })

  it("refuses steering with a clear provider error while a turn runs", async () => {
    fx.server.queue([textReply("x".repeat(30), { chunks: 30, chunkDelayMs: 100 })])
    const rec = makeRecording()
    const request = fx.request("slow please")
    const running = runTurn(fx.adapter, request, rec)
    await waitUntil("the model request", () => (fx.server.modelRequests().length > 0 ? true : undefined))
    const steered = await Effect.runPromise(Effect.either(fx.adapter.steer(request.taskId, "focus on tests")))
    expect(Either.isLeft(steered) && steered.left._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(Either.isLeft(steered) && steered.left.message).toContain("live steering is not enabled")
    expect(expectSuccess(await running)).toBe("x".repeat(30))
    // The message was not sent to the model.
    expect(JSON.stringify(fx.server.modelRequests().map((r) => r.body?.messages))).not.toContain(
      "focus on tests"
    )
    const after = await Effect.runPromise(Effect.either(fx.adapter.steer(request.taskId, "late")))
    expect(Either.isLeft(after) && after.left._tag).toBe("AGENT_TASK_NOT_ACTIVE")
  })
})
