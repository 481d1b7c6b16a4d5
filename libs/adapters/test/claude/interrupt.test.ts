/**
 * Cancel → `interrupt()` on the real CLI: while the model's answer streams, and while a tool's
 * command runs (the command's process goes too). The CLI process is gone afterwards, and the
 * adapter can prove it (reconcile: providerActive false).
 */
import { longCommandReply, textReply } from "@serverfs/testkit"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { parseProcessTurnId } from "../../src/claude/ClaudeProcess.js"
import {
  type ClaudeFixture,
  decision,
  expectFailure,
  makeRecording,
  processesMatching,
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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("Claude adapter: cancel", () => {
  it("interrupts a streaming answer; the CLI is gone and reconcile proves it", async () => {
    // 60 chunks, 250 ms apart: far longer than the test waits before cancelling.
    fx.server.queue([textReply("y".repeat(60), { chunks: 60, chunkDelayMs: 250 }), textReply("never")])
    const rec = makeRecording()
    const request = fx.request("stream slowly")
    const running = runTurn(fx.adapter, request, rec)
    await waitUntil("the model request", () => (fx.server.modelRequests().length > 0 ? true : undefined))
    const cli = parseProcessTurnId(rec.ids.turnId ?? null)
    expect(cli).toBeDefined()
    await Effect.runPromise(fx.adapter.cancel(request.taskId))
    const error = expectFailure(await running)
    expect(error).toMatchObject({
      _tag: "AGENT_PROVIDER_ERROR",
      message: "the turn was interrupted at the user's request"
    })
    expect(fx.server.modelRequests()).toHaveLength(1)
    expect(alive(cli?.pid ?? -1)).toBe(false)
    expect(
      await Effect.runPromise(
        fx.adapter.reconcile({
          taskId: request.taskId,
          sessionId: rec.ids.sessionId ?? null,
          turnId: rec.ids.turnId ?? null
        })
      )
    ).toMatchObject({ status: "SESSION_RESUMABLE", providerActive: false })
  })

  it("interrupts a running command: the command's process is stopped too", async () => {
    const marker = `sfc_marker_${process.pid}_${crypto.randomUUID()}`
    fx.server.queue([longCommandReply(60, marker), textReply("never")])
    const rec = makeRecording({ approval: () => Effect.succeed(decision("approve_once")) })
    const request = fx.request("run the long command")
    const running = runTurn(fx.adapter, request, rec)
    const [pid] = await waitUntil("the command's process", () => {
      const found = processesMatching(marker).filter((p) => p !== process.pid)
      return found.length > 0 ? found : undefined
    })
    expect(rec.events.map((e) => e.type)).toContain("command.started")
    await Effect.runPromise(fx.adapter.cancel(request.taskId))
    const error = expectFailure(await running)
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    await waitUntil("the command to stop", () => (alive(pid ?? -1) ? undefined : true), 10_000)
    expect(processesMatching(marker)).toEqual([])
    expect(fx.server.modelRequests()).toHaveLength(1)
  })
})
