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
  configurationFailure,
  getTask,
  killAll,
  makeSandbox,
  runToExit,
  type Sandbox,
  startBridge,
  startupFailedFields,
  stderrRecords,
  submitParams,
  waitForStatus
} from "./support/daemon.js"
import { guardPath } from "./support/mcpSide.js"
import { nonTerminalTaskIds, plantTask, spoolFile, storageUsage } from "./support/store.js"

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
    // One active task at most: a share of 12 MiB (half the budget).
    const bridge = await startBridge(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "1", SERVERFS_AGENT_STATE_MAX_BYTES: String(BUDGET) })
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

  it("finished tasks a recovery guard protects are never evicted: without room for a share → AGENT_STORAGE_LIMIT_REACHED, nothing inserted; once the guard is gone, room again", async () => {
    sandbox = makeSandbox([
      { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
      { slot: 2, alias: "w2", mode: "workspace-write", runtimes: "fake" },
      { slot: 3, alias: "w3", mode: "review", runtimes: "fake" }
    ])
    // The least budget one active task allows: a share is half of it (9,502,720 bytes).
    const budget = 2 * (8 * MIB + 65_536 + MIB)
    const result = "r".repeat(8_000_000)
    // Left by an earlier bridge: an unguarded finished task, then two whose guards name a runtime
    // this bridge does not run (so nothing can prove them stopped: the guards stay).
    const plain = await plantTask(sandbox.stateDir, {
      status: "succeeded",
      workdirAlias: "w3",
      slot: 3,
      profile: "review",
      spooledResult: result
    })
    const guarded: Array<string> = []
    for (const slot of [1, 2]) {
      const taskId = await plantTask(sandbox.stateDir, {
        status: "succeeded",
        workdirAlias: `w${slot}`,
        slot,
        profile: "workspace-write",
        spooledResult: result
      })
      guarded.push(taskId)
      fs.mkdirSync(path.join(sandbox.lockDir, "active"), { recursive: true, mode: 0o700 })
      fs.chmodSync(sandbox.lockDir, 0o700)
      const now = new Date().toISOString()
      fs.writeFileSync(
        guardPath(sandbox.lockDir, slot),
        `${JSON.stringify({
          correlation_id: null,
          created_at: now,
          native_session_id: null,
          native_turn_id: null,
          runtime: "codex",
          schema_version: 1,
          slot,
          task_id: taskId,
          updated_at: now,
          workdir_alias: `w${slot}`
        })}\n`,
        { mode: 0o600 }
      )
    }
    const bridge = await startBridge(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "1", SERVERFS_AGENT_STATE_MAX_BYTES: String(budget) })
    )
    const c = bridge.client
    // Startup kept the state within the budget: the unguarded task went, the guarded ones stay.
    expect((await callError(c, "task.get", { task_id: plain })).code).toBe("AGENT_TASK_NOT_FOUND")
    expect(fs.existsSync(spoolFile(sandbox.stateDir, plain))).toBe(false)
    expect(await storageUsage(sandbox.stateDir)).toBeLessThanOrEqual(budget)

    // The guarded tasks leave no room for one more share: refused, nothing inserted or evicted.
    const refused = await callError(c, "task.submit", submitParams({ prompt: "complete:no room" }, "w3"))
    expect(refused).toEqual({
      code: "AGENT_STORAGE_LIMIT_REACHED",
      message:
        "the Agent Bridge's state is at its disk budget and no finished task can be evicted; wait for active tasks to finish"
    })
    for (const id of guarded) expect((await getTask(c, id)).status).toBe("succeeded")
    expect(await nonTerminalTaskIds(sandbox.stateDir)).toEqual([])

    // The operator clears one guard: its task is evictable, and the next submission gets room.
    fs.unlinkSync(guardPath(sandbox.lockDir, 2))
    const next = await call(c, "task.submit", submitParams({ prompt: "complete:room" }, "w3"))
    expect((await waitForStatus(c, next.task_id, "succeeded")).final_response).toBe("room")
    expect((await callError(c, "task.get", { task_id: guarded[1] ?? "" })).code).toBe("AGENT_TASK_NOT_FOUND")
    expect((await getTask(c, guarded[0] ?? "")).status).toBe("succeeded")
    expect(await storageUsage(sandbox.stateDir)).toBeLessThanOrEqual(budget)
  })

  it("an active task's events stop at its share (the share less room for its result) → dropped as AGENT_EVENT_LIMIT_REACHED; the task still ends", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    // A share of 9,502,720 bytes: 1 MiB of it for events, the rest for the result.
    const budget = 2 * (8 * MIB + 65_536 + MIB)
    const bridge = await startBridge(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "1", SERVERFS_AGENT_STATE_MAX_BYTES: String(budget) })
    )
    const task = await call(
      bridge.client,
      "task.submit",
      submitParams({ prompt: "events:9000\ncomplete:done" }, "w1")
    )
    await waitForStatus(bridge.client, task.task_id, "succeeded")
    const dropped = stderrRecords(bridge.stderr()).filter(
      (r) => r.event === "event_dropped" && r.error_code === "AGENT_EVENT_LIMIT_REACHED"
    )
    expect(dropped.length).toBeGreaterThan(0)
    expect(await storageUsage(sandbox.stateDir)).toBeLessThanOrEqual(MIB)
  })

  it("a budget too small for the active tasks' shares stops startup with a configuration error", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    const refused = await runToExit(
      sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "4", SERVERFS_AGENT_STATE_MAX_BYTES: String(16 * MIB) })
    )
    expect(refused.code).toBe(2)
    const { human, audit } = configurationFailure(refused.stderr)
    expect(human).toMatch(
      /^ServerFS: configuration error: SERVERFS_AGENT_STATE_MAX_BYTES: must be at least \d+/
    )
    expect(audit).toMatchObject(startupFailedFields("SERVERFS_AGENT_STATE_MAX_BYTES"))
    expect(fs.existsSync(sandbox.stateDir)).toBe(false)
  })
})
