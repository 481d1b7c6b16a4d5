/**
 * A bridge killed with SIGKILL and started again (spec v0.3 §19, v0.7 §2.3, bridge-internals
 * §10): every task the dead process left non-terminal is interrupted — BRIDGE_RESTARTED, or
 * AGENT_TASK_TIMED_OUT past its deadline — and never re-run; reconciliation leaves its evidence
 * in events; a late answer to an old request is REQUEST_STALE. Between the kill and the restart
 * the flock is free but the recovery guard blocks mutations (WORKDIR_RECOVERY_REQUIRED); startup
 * reconciliation removes a guard only when the runtime proves the old run stopped. Nothing
 * committed is lost and the database stays sound.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { TaskEvent } from "@serverfs/domain"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  assertBuilt,
  type Bridge,
  call,
  callError,
  eventTypes,
  getTask,
  killAll,
  makeSandbox,
  type Sandbox,
  startBridge,
  submitParams,
  TERMINAL,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { flockFree, guardPath, mutationGate } from "./support/mcpSide.js"
import { integrityCheck, plantTask, writeGuard } from "./support/store.js"

let sandbox: Sandbox

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  await killAll()
  sandbox?.remove()
})

const turns = (events: ReadonlyArray<TaskEvent>) =>
  eventTypes(events).filter((t) => t === "turn.started").length

/** The reconciliation evidence of one task after a restart. */
const expectReconciled = (
  events: ReadonlyArray<TaskEvent>,
  code: "BRIDGE_RESTARTED" | "AGENT_TASK_TIMED_OUT",
  status: string,
  providerActive: boolean | null
) => {
  const types = eventTypes(events)
  const started = types.indexOf("runtime.reconcile_started")
  const finished = types.indexOf("runtime.reconcile_finished")
  const interrupted = types.lastIndexOf("task.interrupted")
  const reconciled = types.indexOf("task.reconciled")
  expect(started).toBeGreaterThanOrEqual(0)
  expect(started).toBeLessThan(finished)
  expect(finished).toBeLessThan(interrupted)
  expect(interrupted).toBeLessThan(reconciled)
  expect(events[started]?.payload).toEqual({ runtime: "fake" })
  expect(events[finished]?.payload).toEqual({ runtime: "fake", status, provider_active: providerActive })
  expect(events[interrupted]?.payload).toEqual({ error_code: code })
  expect(events[reconciled]?.payload).toEqual({ status, provider_active: providerActive, error_code: code })
  expect(types.filter((t) => t === "task.reconciled")).toHaveLength(1)
}

describe("SIGKILL and restart", () => {
  it("tasks waiting, running or queued are interrupted with BRIDGE_RESTARTED and never re-run; guards follow the proof", async () => {
    sandbox = makeSandbox([
      { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
      { slot: 2, alias: "w2", mode: "workspace-write", runtimes: "fake" },
      { slot: 3, alias: "w3", mode: "workspace-write", runtimes: "fake" },
      { slot: 4, alias: "w4", mode: "review", runtimes: "fake" },
      { slot: 5, alias: "w5", mode: "workspace-write", runtimes: "fake" },
      { slot: 6, alias: "w6", mode: "workspace-write", runtimes: "fake" }
    ])
    const env = sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "50" })
    const first: Bridge = await startBridge(env)
    const c1 = first.client
    const ws = (workdir: string, prompt: string) =>
      call(c1, "task.submit", submitParams({ prompt, profile: "workspace-write" }, workdir))

    const done = await call(c1, "task.submit", submitParams({ prompt: "complete:kept" }, "w4"))
    await waitForStatus(c1, done.task_id, "succeeded")
    const approval = await ws("w1", "write:before.txt=1\napproval:deploy\nwrite:after.txt=1")
    const running = await ws("w2", "say:working\nwait:")
    const survivor = await ws("w3", "survive:\nwait:")
    const question = await call(
      c1,
      "task.submit",
      submitParams({ prompt: "question:Which?\nwrite:q.txt=1" }, "w4")
    )
    const waitingApproval = await waitForStatus(c1, approval.task_id, "waiting_for_approval")
    await waitForStatus(c1, running.task_id, "running")
    await waitForStatus(c1, survivor.task_id, "running")
    const waitingQuestion = await waitForStatus(c1, question.task_id, "waiting_for_question")
    await waitUntil("the running task's message", async () =>
      eventTypes(await allEvents(c1, running.task_id)).includes("agent.message") ? true : undefined
    )
    const approvalRequest = waitingApproval.pending_request?.request_id ?? ""
    const questionRequest = waitingQuestion.pending_request?.request_id ?? ""
    expect(fs.existsSync(path.join(sandbox.workdir("w1"), "before.txt"))).toBe(true)

    const tracked = [done, approval, running, survivor, question].map((t) => t.task_id)
    const before = new Map<string, Array<TaskEvent>>()
    for (const id of tracked) before.set(id, await allEvents(c1, id))
    for (const slot of [1, 2, 3]) {
      expect(fs.existsSync(guardPath(sandbox.lockDir, slot))).toBe(true)
      expect(mutationGate(sandbox.lockDir, slot)).toBe("WORKDIR_BUSY")
    }

    // One more, killed the moment its submission is answered: queued, or just starting.
    const raced = await ws("w5", "write:raced.txt=1\nwait:")
    expect(raced.status).toBe("queued")
    const killed = await first.kill()
    expect(killed.signal).toBe("SIGKILL")
    expect(first.stdout()).toBe("")
    // The database the dead process left is sound.
    expect(await integrityCheck(sandbox.stateDir)).toEqual(["ok"])

    // Between the kill and the restart: the kill released every flock, the guards stay, so
    // serverfs-mcp refuses mutations with WORKDIR_RECOVERY_REQUIRED.
    for (const slot of [1, 2, 3]) {
      expect(flockFree(sandbox.lockDir, slot)).toBe(true)
      expect(mutationGate(sandbox.lockDir, slot)).toBe("WORKDIR_RECOVERY_REQUIRED")
    }
    expect(fs.existsSync(guardPath(sandbox.lockDir, 5))).toBe(true)
    // A task the dead process had inserted but never started (its row and guard, as it left them).
    const queued = await plantTask(sandbox.stateDir, {
      status: "queued",
      workdirAlias: "w6",
      slot: 6,
      profile: "workspace-write"
    })
    writeGuard(sandbox.lockDir, 6, { task_id: queued, workdir_alias: "w6" })
    expect(mutationGate(sandbox.lockDir, 6)).toBe("WORKDIR_RECOVERY_REQUIRED")

    const second = await startBridge(env)
    const c2 = second.client

    for (const id of [
      approval.task_id,
      running.task_id,
      question.task_id,
      raced.task_id,
      queued,
      survivor.task_id
    ]) {
      const view = await getTask(c2, id)
      expect(view.status, id).toBe("interrupted")
      expect(view.error_code).toBe("BRIDGE_RESTARTED")
      expect(view.pending_request_id).toBeNull()
      expect(view.pending_request).toBeUndefined()
    }
    expectReconciled(await allEvents(c2, approval.task_id), "BRIDGE_RESTARTED", "SESSION_RESUMABLE", false)
    expectReconciled(await allEvents(c2, running.task_id), "BRIDGE_RESTARTED", "SESSION_RESUMABLE", false)
    expectReconciled(await allEvents(c2, question.task_id), "BRIDGE_RESTARTED", "SESSION_RESUMABLE", false)
    expectReconciled(await allEvents(c2, survivor.task_id), "BRIDGE_RESTARTED", "UNKNOWN", null)
    expectReconciled(await allEvents(c2, queued), "BRIDGE_RESTARTED", "NOT_RECOVERABLE", false)
    // Never started, never run.
    expect(eventTypes(await allEvents(c2, queued))).not.toContain("task.started")
    expect(turns(await allEvents(c2, raced.task_id))).toBeLessThanOrEqual(1)
    expect((await getTask(c2, done.task_id)).status).toBe("succeeded")
    expect(eventTypes(await allEvents(c2, done.task_id))).not.toContain("task.reconciled")

    // No event or task lost: every event seen before the kill is still there, unchanged.
    for (const id of tracked) {
      const after = await allEvents(c2, id)
      const earlier = before.get(id) ?? []
      expect(after.slice(0, earlier.length)).toEqual(earlier)
      expect(turns(after)).toBe(turns(earlier))
    }

    // Late answers to the old requests.
    expect(
      (
        await callError(c2, "task.approval.respond", {
          task_id: approval.task_id,
          request_id: approvalRequest,
          decision: "approve_once"
        })
      ).code
    ).toBe("REQUEST_STALE")
    expect(
      (
        await callError(c2, "task.question.answer", {
          task_id: question.task_id,
          request_id: questionRequest,
          answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
        })
      ).code
    ).toBe("REQUEST_STALE")

    // Guards: removed where the scripted runtime proves the old run stopped, kept for survive:.
    for (const slot of [1, 2, 5, 6]) expect(mutationGate(sandbox.lockDir, slot), `slot ${slot}`).toBe("free")
    expect(mutationGate(sandbox.lockDir, 3)).toBe("WORKDIR_RECOVERY_REQUIRED")
    expect(
      (
        await callError(
          c2,
          "task.submit",
          submitParams({ prompt: "complete:x", profile: "workspace-write" }, "w3")
        )
      ).code
    ).toBe("WORKDIR_RECOVERY_REQUIRED")
    const fresh = await call(
      c2,
      "task.submit",
      submitParams({ prompt: "complete:fresh", profile: "workspace-write" }, "w1")
    )
    expect((await waitForStatus(c2, fresh.task_id, TERMINAL)).status).toBe("succeeded")

    // Still nothing re-ran: no second turn, no write past the approval point.
    for (const id of tracked) expect(turns(await allEvents(c2, id))).toBe(turns(before.get(id) ?? []))
    expect(fs.existsSync(path.join(sandbox.workdir("w1"), "after.txt"))).toBe(false)
    expect(fs.existsSync(path.join(sandbox.workdir("w4"), "q.txt"))).toBe(false)

    expect(await second.stop()).toEqual({ code: 0, signal: null })
    expect(second.stdout()).toBe("")
    expect(await integrityCheck(sandbox.stateDir)).toEqual(["ok"])
  }, 120_000)

  it("a task killed before its deadline and restarted after it is interrupted with AGENT_TASK_TIMED_OUT", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    const first = await startBridge(sandbox.env({ SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "5" }))
    const { task_id } = await call(
      first.client,
      "task.submit",
      submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
    )
    const view = await waitForStatus(first.client, task_id, "running")
    await first.kill()
    // Killed before its deadline: only the restart can end it now.
    expect(Date.now()).toBeLessThan(Date.parse(view.deadline_at))
    // Restarted only once its deadline has passed.
    await waitUntil("the deadline to pass", () =>
      Date.now() > Date.parse(view.deadline_at) + 50 ? true : undefined
    )
    const second = await startBridge(sandbox.env())
    const after = await getTask(second.client, task_id)
    expect(after.status).toBe("interrupted")
    expect(after.error_code).toBe("AGENT_TASK_TIMED_OUT")
    expect(after.deadline_at).toBe(view.deadline_at)
    const events = await allEvents(second.client, task_id)
    expectReconciled(events, "AGENT_TASK_TIMED_OUT", "SESSION_RESUMABLE", false)
    expect(mutationGate(sandbox.lockDir, 1)).toBe("free")
    expect(await second.stop()).toEqual({ code: 0, signal: null })
    expect(await integrityCheck(sandbox.stateDir)).toEqual(["ok"])
  }, 120_000)
})
