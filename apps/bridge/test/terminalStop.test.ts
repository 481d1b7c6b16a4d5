/**
 * The one stop (issue 15 item 3): every end the bridge decides for a live workspace-write task —
 * cancel, a cancel_task decision, the deadline, an interaction's expiry, a request over the
 * interaction limit, shutdown — reaches the provider's `cancel` after the terminal state is
 * committed, and the task's lease and guard then go. The adapter here is shaped like Codex at
 * its stop: once its interaction ended it returns only after the bridge's `cancel` reached it,
 * and it records the terminal status it saw at that moment. In process, through the real RPC
 * server and client; the end-to-end proof with the real binaries is
 * apps/mcp/test/{codex,claude}/terminalRelease.test.ts.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { ProviderAdapter } from "@serverfs/adapters"
import { AgentProviderError } from "@serverfs/domain"
import { Deferred, Effect, Exit, FiberId } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { call, makeSandbox, type Sandbox, submitParams, TERMINAL, waitForStatus } from "./support/daemon.js"
import { type InProcessServer, serveInProcess } from "./support/inProcess.js"
import { flockFree, guardPath } from "./support/mcpSide.js"

interface Stops {
  /** Task ids in the order their `cancel` arrived. */
  readonly cancels: Array<string>
}

/** Codex-like at its stop: after an ended interaction (or cancel_task) it waits for `cancel`, unbounded. */
const stopAwaiting = (stops: Stops): ProviderAdapter => {
  const signals = new Map<string, Deferred.Deferred<void>>()
  const signal = (taskId: string) => {
    const known = signals.get(taskId)
    if (known !== undefined) return known
    const made = Deferred.unsafeMake<void>(FiberId.none)
    signals.set(taskId, made)
    return made
  }
  const untilCancelled = (taskId: string) =>
    Effect.zipRight(
      Deferred.await(signal(taskId)),
      Effect.fail(new AgentProviderError({ message: "the turn was interrupted at ServerFS's request" }))
    )
  return {
    name: "fake",
    inFlightRecovery: "none",
    probe: () => Effect.succeed({ name: "fake", available: true, version: "stop-1" }),
    run: (request, sink) =>
      sink
        .requestApproval({
          category: "command",
          title: request.prompt === "huge" ? "x".repeat(70_000) : "Run it?",
          available_decisions: ["approve_once", "deny", "cancel_task"]
        })
        .pipe(
          Effect.flatMap((answer) =>
            answer.decision === "cancel_task"
              ? untilCancelled(request.taskId)
              : Effect.succeed({ finalText: answer.decision })
          ),
          Effect.catchTag("InteractionEnded", () => untilCancelled(request.taskId))
        ),
    steer: () => Effect.void,
    cancel: (taskId) =>
      Effect.sync(() => {
        stops.cancels.push(taskId)
        Deferred.unsafeDone(signal(taskId), Exit.void)
      }),
    reconcile: () =>
      Effect.succeed({ status: "NOT_RECOVERABLE", providerActive: false, detail: "in-process" }),
    close: () => Effect.void
  }
}

let sandbox: Sandbox | undefined
let server: InProcessServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
  sandbox?.remove()
  sandbox = undefined
})

const start = async (overrides: Record<string, string> = {}) => {
  const sb = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
  sandbox = sb
  fs.mkdirSync(path.dirname(sb.socketPath), { recursive: true, mode: 0o700 })
  const stops: Stops = { cancels: [] }
  server = await serveInProcess(sb.env(overrides), sb.socketPath, [stopAwaiting(stops)])
  const client = server.client
  const submit = async (prompt = "go") =>
    (await call(client, "task.submit", submitParams({ prompt, profile: "workspace-write" }, "w1"))).task_id
  return { sb, stops, client, submit }
}

/** The lease free to another process and no guard left (the run has ended; bounded, not timed). */
const released = async (sb: Sandbox) => {
  for (let i = 0; i < 200 && !(flockFree(sb.lockDir, 1) && !fs.existsSync(guardPath(sb.lockDir, 1))); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  expect(flockFree(sb.lockDir, 1)).toBe(true)
  expect(fs.existsSync(guardPath(sb.lockDir, 1))).toBe(false)
}

describe("every terminal path stops the run through the provider's cancel", () => {
  it("interaction expiry", async () => {
    const { sb, stops, client, submit } = await start({ SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "1" })
    const taskId = await submit()
    await waitForStatus(client, taskId, "waiting_for_approval")
    const view = await waitForStatus(client, taskId, TERMINAL)
    expect([view.status, view.error_code]).toEqual(["interrupted", "AGENT_INTERACTION_TIMED_OUT"])
    await released(sb)
    expect(stops.cancels).toContain(taskId)
  })

  it("a request over the interaction limit", async () => {
    const { sb, stops, client, submit } = await start()
    const taskId = await submit("huge")
    const view = await waitForStatus(client, taskId, TERMINAL)
    expect(view.error_code).toBe("AGENT_INTERACTION_TOO_LARGE")
    await released(sb)
    expect(stops.cancels).toContain(taskId)
  })

  it("the deadline", async () => {
    const { sb, stops, client, submit } = await start({ SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "2" })
    const taskId = await submit()
    const view = await waitForStatus(client, taskId, TERMINAL)
    expect([view.status, view.error_code]).toEqual(["interrupted", "AGENT_TASK_TIMED_OUT"])
    await released(sb)
    expect(stops.cancels).toContain(taskId)
  })

  it("cancel, and a cancel_task decision (cancelled, never failed)", async () => {
    const { sb, stops, client, submit } = await start()
    const first = await submit()
    await waitForStatus(client, first, "waiting_for_approval")
    expect((await call(client, "task.cancel", { task_id: first })).status).toBe("cancelled")
    await released(sb)
    expect(stops.cancels).toContain(first)
    const second = await submit()
    const waiting = await waitForStatus(client, second, "waiting_for_approval")
    await call(client, "task.approval.respond", {
      task_id: second,
      request_id: waiting.pending_request?.request_id ?? "",
      decision: "cancel_task"
    })
    expect((await waitForStatus(client, second, TERMINAL)).status).toBe("cancelled")
    await released(sb)
    expect(stops.cancels).toContain(second)
  })

  it("shutdown: the bridge's scope closes only after the run stopped and the lease went", async () => {
    const { sb, stops, client, submit } = await start()
    const taskId = await submit()
    await waitForStatus(client, taskId, "waiting_for_approval")
    await server?.close()
    server = undefined
    expect(flockFree(sb.lockDir, 1)).toBe(true)
    expect(fs.existsSync(guardPath(sb.lockDir, 1))).toBe(false)
    expect(stops.cancels).toContain(taskId)
  })
})
