/**
 * Continuation by explicit session id (spec v0.3 §18 "Continue a prior task") on the real CLI:
 * a new turn in a new CLI process resumes the recorded session and the model sees the prior
 * conversation; an unknown id is a clean AGENT_SESSION_NOT_RESUMABLE. Plus reconciliation of
 * turns this process never ran.
 */
import { spawn } from "node:child_process"
import { messageTexts, textReply } from "@serverfs/testkit"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { processTurnId } from "../../src/claude/ClaudeProcess.js"
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

beforeAll(async () => {
  fx = await startClaudeFixture()
})

beforeEach(() => {
  fx.server.clear()
})

afterAll(async () => {
  await fx?.close()
})

describe("Claude adapter: resume", () => {
  it("a continuation resumes the recorded session in a new CLI process", async () => {
    fx.server.queue([textReply("Noted: the codeword is PELICAN.")])
    const first = makeRecording()
    expectSuccess(await runTurn(fx.adapter, fx.request("Remember the codeword PELICAN."), first))
    const sessionId = first.ids.sessionId
    expect(sessionId).toBeDefined()

    fx.server.clear()
    fx.server.queue([textReply("The codeword was PELICAN.")])
    const second = makeRecording()
    const request = fx.request("What was the codeword?", { resume: { sessionId: sessionId ?? "" } })
    expect(expectSuccess(await runTurn(fx.adapter, request, second))).toBe("The codeword was PELICAN.")
    expect(second.ids.sessionId).toBe(sessionId)
    expect(second.ids.turnId).not.toBe(first.ids.turnId)
    expect(second.events[0]).toMatchObject({ type: "turn.started", payload: { continued: true } })
    // The resumed request carries the whole prior conversation, then the new prompt.
    const [resumed] = fx.server.modelRequests()
    const texts = messageTexts(resumed ?? { method: "", path: "", headers: {}, body: undefined }).join("\n")
    expect(texts).toContain("Remember the codeword PELICAN.")
    expect(texts).toContain("Noted: the codeword is PELICAN.")
    expect(texts.indexOf("What was the codeword?")).toBeGreaterThan(
      texts.indexOf("Noted: the codeword is PELICAN.")
    )
  })

  it("an unknown session id fails cleanly with AGENT_SESSION_NOT_RESUMABLE", async () => {
    const rec = makeRecording()
    const request = fx.request("continue", { resume: { sessionId: "0f1e2d3c-4b5a-4968-8776-655443322110" } })
    const error = expectFailure(await runTurn(fx.adapter, request, rec))
    expect(error._tag).toBe("AGENT_SESSION_NOT_RESUMABLE")
    expect(error.message).not.toContain("/")
    expect(fx.server.modelRequests()).toEqual([])
  })
})

describe("Claude adapter: reconcile of turns run by another process", () => {
  it("no record: resumable with a session, else not recoverable — activity unknown", async () => {
    expect(
      await Effect.runPromise(fx.adapter.reconcile({ taskId: "agt_x1", sessionId: "s", turnId: null }))
    ).toMatchObject({
      status: "SESSION_RESUMABLE",
      providerActive: null
    })
    expect(
      await Effect.runPromise(fx.adapter.reconcile({ taskId: "agt_x2", sessionId: null, turnId: null }))
    ).toMatchObject({
      status: "NOT_RECOVERABLE",
      providerActive: null
    })
  })

  it("a recorded CLI whose process group is gone is proven stopped; a surviving one is stopped first", async () => {
    // A stand-in for a previous bridge's CLI: a process group leader that outlives its parent.
    const orphan = spawn("python3", ["-c", "import time; time.sleep(60)"], {
      detached: true,
      stdio: "ignore"
    })
    const pid = orphan.pid ?? -1
    const turnId = processTurnId(pid)
    const exited = new Promise<void>((resolve) => orphan.once("exit", () => resolve()))
    const live = await Effect.runPromise(fx.adapter.reconcile({ taskId: "agt_x3", sessionId: "s", turnId }))
    expect(live).toMatchObject({ status: "SESSION_RESUMABLE", providerActive: false })
    await exited
    await waitUntil("the orphan to be reaped", () =>
      orphan.exitCode !== null || orphan.signalCode !== null ? true : undefined
    )
    const gone = await Effect.runPromise(fx.adapter.reconcile({ taskId: "agt_x3", sessionId: "s", turnId }))
    expect(gone).toMatchObject({
      status: "SESSION_RESUMABLE",
      providerActive: false,
      detail: "the turn's CLI process group is gone"
    })
    // A recycled pid (another start time) is not ours to stop.
    const other = spawn("python3", ["-c", "import time; time.sleep(60)"], { detached: true, stdio: "ignore" })
    try {
      const foreign = `cli:${other.pid}:1`
      expect(
        await Effect.runPromise(fx.adapter.reconcile({ taskId: "agt_x4", sessionId: "s", turnId: foreign }))
      ).toMatchObject({
        status: "UNKNOWN",
        providerActive: null
      })
      expect(other.exitCode).toBeNull()
    } finally {
      other.kill("SIGKILL")
    }
  })
})
