/**
 * The disk budget of the bridge's state (issue 14, item 10): finished tasks used unbounded disk
 * (60 tasks of 2,000 events and an 8 MiB result each wrote 541 MB in 17 s; retention was by age
 * only). With SERVERFS_AGENT_STATE_MAX_BYTES every active task gets an equal share, finished
 * tasks are evicted oldest first to keep within the budget, and a submission that cannot get a
 * share even after eviction is refused with AGENT_STORAGE_LIMIT_REACHED — end to end, with the
 * real daemon and the scripted runtime.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  assertBuilt,
  call,
  callError,
  getTask,
  killAll,
  makeSandbox,
  runToExit,
  type Sandbox,
  startBridge,
  stderrRecords,
  submitParams,
  waitForStatus
} from "./support/daemon.js"
import { guardPath } from "./support/mcpSide.js"
import { storageUsage } from "./support/store.js"

let sandbox: Sandbox

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  await killAll()
  sandbox?.remove()
})

const MIB = 1_048_576
const BUDGET = 24 * MIB

const spooledBytes = (stateDir: string) => {
  const dir = path.join(stateDir, "results")
  return fs.existsSync(dir)
    ? fs.readdirSync(dir).reduce((sum, name) => sum + fs.statSync(path.join(dir, name)).size, 0)
    : 0
}

describe("the state's disk budget", () => {
  it("finished tasks are evicted oldest first; usage and spooled results stay within the budget", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    // Two active tasks at most: a share of 12 MiB each.
    const bridge = await startBridge(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "2", SERVERFS_AGENT_STATE_MAX_BYTES: String(BUDGET) })
    )
    const ids: Array<string> = []
    for (let i = 0; i < 12; i++) {
      const task = await call(
        bridge.client,
        "task.submit",
        submitParams({ prompt: "events:500\nlarge:3000000" }, "w1")
      )
      const done = await waitForStatus(bridge.client, task.task_id, "succeeded")
      expect(done.result?.storage).toBe("spool")
      ids.push(task.task_id)
      expect(await storageUsage(sandbox.stateDir)).toBeLessThanOrEqual(BUDGET)
      expect(spooledBytes(sandbox.stateDir)).toBeLessThanOrEqual(BUDGET)
    }
    // 12 × ~3.1 MB were written into 24 MiB: the oldest went first, the newest are all there.
    const present: Array<boolean> = []
    for (const id of ids) {
      const outcome = await getTask(bridge.client, id).then(
        () => true,
        (e: unknown) => {
          expect(String(e)).toContain("AGENT_TASK_NOT_FOUND")
          return false
        }
      )
      present.push(outcome)
    }
    const firstKept = present.indexOf(true)
    expect(firstKept).toBeGreaterThan(0)
    expect(present.slice(firstKept).every(Boolean)).toBe(true)
    const evicted = stderrRecords(bridge.stderr()).filter((r) => r.event === "tasks_evicted")
    expect(evicted.length).toBeGreaterThan(0)
    expect(evicted.reduce((n, r) => n + Number(r.count), 0)).toBe(firstKept)
  })

  it("finished tasks a recovery guard protects cannot be evicted: a submission without room → AGENT_STORAGE_LIMIT_REACHED, nothing inserted; room again once the active task ends", async () => {
    sandbox = makeSandbox([
      { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
      { slot: 2, alias: "w2", mode: "review", runtimes: "fake" }
    ])
    // The least budget two active tasks allow: every byte of it is their shares.
    const budget = 2 * (8 * MIB + 65_536 + MIB)
    const bridge = await startBridge(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "2", SERVERFS_AGENT_STATE_MAX_BYTES: String(budget) })
    )
    const c = bridge.client
    // A writer whose provider the scripted runtime claims survives its cancel: finished, but its
    // guard stays and protects it (and its 2,000 events) from eviction.
    const survivor = await call(
      c,
      "task.submit",
      submitParams({ prompt: "survive:\nevents:2000\nwait:", profile: "workspace-write" }, "w1")
    )
    await waitForStatus(c, survivor.task_id, "running")
    await call(c, "task.cancel", { task_id: survivor.task_id })
    expect(fs.existsSync(guardPath(sandbox.lockDir, 1))).toBe(true)
    // One active task holds its share; the protected task's bytes leave no share for another.
    const active = await call(c, "task.submit", submitParams({ prompt: "wait:" }, "w2"))
    await waitForStatus(c, active.task_id, "running")

    const refused = await callError(c, "task.submit", submitParams({ prompt: "complete:no room" }, "w2"))
    expect(refused.code).toBe("AGENT_STORAGE_LIMIT_REACHED")
    expect(refused.message).not.toContain(sandbox.base)
    // Nothing was inserted and nothing evicted: only the two tasks exist.
    expect((await getTask(c, survivor.task_id)).status).toBe("cancelled")
    expect((await getTask(c, active.task_id)).status).toBe("running")

    // The active task ends: its share is free again (it is finished and evictable).
    await call(c, "task.cancel", { task_id: active.task_id })
    const next = await call(c, "task.submit", submitParams({ prompt: "complete:room" }, "w2"))
    expect((await waitForStatus(c, next.task_id, "succeeded")).final_response).toBe("room")
    expect((await getTask(c, survivor.task_id)).status).toBe("cancelled")
  })

  it("a budget too small for the active tasks' shares stops startup with a configuration error", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    const refused = await runToExit(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "4", SERVERFS_AGENT_STATE_MAX_BYTES: String(16 * MIB) })
    )
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(
      /^ServerFS: configuration error: SERVERFS_AGENT_STATE_MAX_BYTES: must be at least \d+/
    )
    expect(fs.existsSync(sandbox.stateDir)).toBe(false)
  })
})
