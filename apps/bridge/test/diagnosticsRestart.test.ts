/**
 * Diagnostics across a restart of the real daemon (spec v0.22 §6.1, §8.2, §9.4): the recorder is
 * memory-only, so a SIGKILLed bridge's traces are gone. After the restart a task that had already
 * ended is `not_retained` / `bridge_restarted` (never an empty trace); a task the restart
 * reconciles gets a `restarted` trace — its `agent.recovery` operation and its seal — never
 * `complete`; the recovery metrics count the same outcomes; a new task is `complete` again.
 */
import { afterEach, beforeAll, expect, it, vi } from "vitest"
import {
  assertBuilt,
  call,
  killAll,
  makeSandbox,
  type Sandbox,
  startBridge,
  submitParams,
  TERMINAL,
  waitForStatus
} from "./support/daemon.js"
import { diagnosticsSnapshot, diagnosticsTask, metricOf, sealedTrace } from "./support/observability.js"

vi.setConfig({ testTimeout: 120_000 })

let sandbox: Sandbox

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  await killAll()
  sandbox?.remove()
})

it("after SIGKILL and restart: not_retained/bridge_restarted, restarted with agent.recovery, then complete again", async () => {
  sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
  const first = await startBridge(sandbox.env())
  const finished = await call(first.client, "task.submit", submitParams({ prompt: "complete:done" }, "w1"))
  await sealedTrace(first.client, finished.task_id)
  const running = await call(
    first.client,
    "task.submit",
    submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
  )
  await waitForStatus(first.client, running.task_id, "running")
  expect((await diagnosticsSnapshot(first.client)).durable_tasks_predate_generation).toBe(false)
  await first.kill()

  const second = await startBridge(sandbox.env())
  const c = second.client
  const snapshot = await diagnosticsSnapshot(c)
  expect(snapshot.durable_tasks_predate_generation).toBe(true)

  expect(await diagnosticsTask(c, finished.task_id)).toEqual({
    catalog_version: 1,
    disposition: "not_retained",
    task_id: finished.task_id,
    reason: "bridge_restarted"
  })

  const view = await waitForStatus(c, running.task_id, TERMINAL)
  expect(view).toMatchObject({ status: "interrupted", error_code: "BRIDGE_RESTARTED" })
  const restarted = await sealedTrace(c, running.task_id)
  expect(restarted.completeness).toBe("restarted")
  expect(restarted.operations.map((o) => [o.kind, o.outcome])).toEqual([["agent.recovery", "interrupted"]])
  expect(restarted.seal).toMatchObject({ outcome: "interrupted", reason_code: "unavailable" })

  // The same outcomes in the metrics of this process (they reset with it).
  expect(await metricOf(c, "serverfs_agent_recovery_total", { outcome: "interrupted" })).toBe(1)
  expect(await metricOf(c, "serverfs_agent_recovery_total", { outcome: "guard_cleared" })).toBe(1)
  expect(await metricOf(c, "serverfs_agent_tasks_terminal_total", { outcome: "interrupted" })).toBe(1)
  expect(await metricOf(c, "serverfs_agent_queue_depth")).toBe(0)

  const fresh = await call(
    c,
    "task.submit",
    submitParams({ prompt: "complete:again", profile: "workspace-write" }, "w1")
  )
  const trace = await sealedTrace(c, fresh.task_id)
  expect(trace.completeness).toBe("complete")
  expect(trace.operations[0]).toMatchObject({ kind: "agent.lease_acquire", outcome: "acquired" })
  expect(second.stdout()).toBe("")
})
