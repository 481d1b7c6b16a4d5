/**
 * The operator's bridge methods (issue 10) against a real daemon: task.list (filters, limits,
 * truncation, bounded arguments), lease.list (held by a task, held elsewhere — probed without
 * disturbing the holder —, free; guard none/valid/invalid) and lease.recover (busy refusal,
 * no_guard, reconciled by the runtime, forced by the operator, invalid guard, unknown slots).
 * One daemon for the file; each test works on its own slots.
 */
import * as fs from "node:fs"
import { AT, close, flock, LOCK, O, openat } from "@serverfs/posix"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  assertBuilt,
  type Bridge,
  call,
  callError,
  getTask,
  killAll,
  makeSandbox,
  type Sandbox,
  startBridge,
  stderrRecords,
  submitParams,
  TERMINAL,
  waitForStatus
} from "./support/daemon.js"
import { guardPath, lockPath, mutationGate } from "./support/mcpSide.js"
import { plantTask, writeGuard } from "./support/store.js"

let sandbox: Sandbox
let bridge: Bridge

beforeAll(async () => {
  assertBuilt()
  sandbox = makeSandbox([
    { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
    { slot: 2, alias: "w2", mode: "workspace-write", runtimes: "fake" },
    { slot: 3, alias: "ro", readOnly: true, mode: "review", runtimes: "fake" },
    { slot: 4, alias: "w4", mode: "workspace-write", runtimes: "fake" },
    { slot: 5, alias: "w5", mode: "workspace-write", runtimes: "fake" },
    { slot: 6, alias: "w6", mode: "workspace-write", runtimes: "fake" }
  ])
  bridge = await startBridge(sandbox.env())
}, 60_000)
afterAll(async () => {
  await killAll()
  sandbox?.remove()
})

const leaseOf = async (slot: number) =>
  (await call(bridge.client, "lease.list", {})).workdirs.find((w) => w.slot === slot)

describe("task.list", () => {
  it("lists newest first with filters and truncation, never the correlation id", async () => {
    const submitted: Array<string> = []
    for (const [workdir, prompt] of [
      ["w1", "complete:one"],
      ["ro", "complete:two"],
      ["w2", "complete:three"]
    ] as const) {
      const task = await call(
        bridge.client,
        "task.submit",
        submitParams({ prompt, correlation_id: "corr-SENTINEL-7" }, workdir)
      )
      await waitForStatus(bridge.client, task.task_id, TERMINAL)
      submitted.push(task.task_id)
    }
    const all = await call(bridge.client, "task.list", {})
    expect(all.tasks.map((t) => t.task_id).slice(0, 3)).toEqual([...submitted].reverse())
    expect(all.truncated).toBe(false)
    expect(JSON.stringify(all)).not.toContain("SENTINEL")
    expect(all.tasks[0]).toMatchObject({ runtime: "fake", workdir_alias: "w2", status: "succeeded" })

    const limited = await call(bridge.client, "task.list", { limit: 2 })
    expect(limited.tasks.map((t) => t.task_id)).toEqual([submitted[2], submitted[1]])
    expect(limited.truncated).toBe(true)
    const byWorkdir = await call(bridge.client, "task.list", { workdir: "ro" })
    expect(byWorkdir.tasks.map((t) => t.task_id)).toEqual([submitted[1]])
    expect((await call(bridge.client, "task.list", { runtime: "codex" })).tasks).toEqual([])
    const byStatus = await call(bridge.client, "task.list", {
      statuses: ["failed", "succeeded"],
      workdir: "w1"
    })
    expect(byStatus.tasks.map((t) => t.task_id)).toEqual([submitted[0]])

    for (const limit of [0, 501, -1])
      expect((await callError(bridge.client, "task.list", { limit })).code).toBe("INVALID_LIMIT")
    expect((await callError(bridge.client, "task.list", { statuses: ["runnin"] })).code).toBe(
      "INVALID_REQUEST"
    )
    expect((await callError(bridge.client, "task.list", { workdir: "x".repeat(129) })).code).toBe(
      "INVALID_REQUEST"
    )
  }, 60_000)
})

describe("lease.list and lease.recover", () => {
  it("a live task's lease is held by it and refuses recovery; a foreign flock is held elsewhere", async () => {
    const task = await call(
      bridge.client,
      "task.submit",
      submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
    )
    await waitForStatus(bridge.client, task.task_id, "running")
    expect(await leaseOf(1)).toEqual({
      slot: 1,
      workdir_alias: "w1",
      lease: "held",
      task_id: task.task_id,
      guard: "valid",
      guard_task_id: task.task_id,
      guard_task_status: "running"
    })
    // Read-only workdirs have no writer lease: not listed.
    expect(await leaseOf(3)).toBeUndefined()
    expect((await callError(bridge.client, "lease.recover", { slot: 1 })).code).toBe("WORKDIR_BUSY")
    expect((await callError(bridge.client, "lease.recover", { slot: 1, force: true })).code).toBe(
      "WORKDIR_BUSY"
    )
    expect((await getTask(bridge.client, task.task_id)).status).toBe("running")
    await call(bridge.client, "task.cancel", { task_id: task.task_id })
    await waitForStatus(bridge.client, task.task_id, TERMINAL)

    // Another process holds slot 2's flock (as an MCP mutation does).
    const fd = openat(AT.FDCWD, lockPath(sandbox.lockDir, 2), O.RDONLY | O.NOFOLLOW)
    try {
      flock(fd, LOCK.EX | LOCK.NB)
      expect(await leaseOf(2)).toMatchObject({ lease: "held_elsewhere", task_id: null, guard: "none" })
      expect((await callError(bridge.client, "lease.recover", { slot: 2 })).code).toBe("WORKDIR_BUSY")
    } finally {
      close(fd)
    }
    expect(await leaseOf(2)).toMatchObject({ lease: "free", guard: "none" })
  }, 60_000)

  it("listing leases never takes a flock: a writer racing with it never sees WORKDIR_BUSY", async () => {
    const listing = (async () => {
      for (let i = 0; i < 30; i++) await call(bridge.client, "lease.list", {})
    })()
    let gates = 0
    let done = false
    void listing.then(() => {
      done = true
    })
    while (!done) {
      expect(mutationGate(sandbox.lockDir, 4)).toBe("free")
      gates++
      await new Promise((resolve) => setImmediate(resolve))
    }
    await listing
    expect(gates).toBeGreaterThan(0)
  }, 60_000)

  it("no_guard, and unknown, read-only or out-of-range slots", async () => {
    expect(await call(bridge.client, "lease.recover", { slot: 4 })).toEqual({
      slot: 4,
      workdir_alias: "w4",
      outcome: "no_guard",
      proof: null,
      task_id: null,
      task_status: null
    })
    expect((await callError(bridge.client, "lease.recover", { slot: 3 })).code).toBe("WORKDIR_NOT_FOUND")
    expect((await callError(bridge.client, "lease.recover", { slot: 9 })).code).toBe("WORKDIR_NOT_FOUND")
    for (const slot of [0, 17])
      expect((await callError(bridge.client, "lease.recover", { slot })).code).toBe("INVALID_REQUEST")
  }, 30_000)

  it("a guard whose run the runtime proves stopped is reconciled: task interrupted, guard removed", async () => {
    const taskId = await plantTask(sandbox.stateDir, {
      status: "running",
      workdirAlias: "w5",
      slot: 5,
      profile: "workspace-write",
      sessionId: "fake-session"
    })
    writeGuard(sandbox.lockDir, 5, {
      task_id: taskId,
      workdir_alias: "w5",
      native_session_id: "fake-session"
    })
    expect(mutationGate(sandbox.lockDir, 5)).toBe("WORKDIR_RECOVERY_REQUIRED")
    expect(await leaseOf(5)).toMatchObject({
      guard: "valid",
      guard_task_id: taskId,
      guard_task_status: "running"
    })
    expect(await call(bridge.client, "lease.recover", { slot: 5 })).toEqual({
      slot: 5,
      workdir_alias: "w5",
      outcome: "cleared",
      proof: "reconciled",
      task_id: taskId,
      task_status: "interrupted"
    })
    expect((await getTask(bridge.client, taskId)).error_code).toBe("AGENT_PROVIDER_INACTIVE")
    expect(mutationGate(sandbox.lockDir, 5)).toBe("free")
    const audit = stderrRecords(bridge.stderr()).find((r) => r.event === "guard_recovered" && r.slot === 5)
    expect(audit).toMatchObject({ task_id: taskId, proof: "reconciled" })
  }, 30_000)

  it("an unprovable run stays WORKDIR_RECOVERY_REQUIRED until forced", async () => {
    const taskId = await plantTask(sandbox.stateDir, {
      status: "running",
      workdirAlias: "w6",
      slot: 6,
      profile: "workspace-write",
      sessionId: "s-survivor"
    })
    writeGuard(sandbox.lockDir, 6, { task_id: taskId, workdir_alias: "w6", native_session_id: "s-survivor" })
    expect((await callError(bridge.client, "lease.recover", { slot: 6 })).code).toBe(
      "WORKDIR_RECOVERY_REQUIRED"
    )
    expect(fs.existsSync(guardPath(sandbox.lockDir, 6))).toBe(true)
    expect((await getTask(bridge.client, taskId)).status).toBe("running")
    expect(await call(bridge.client, "lease.recover", { slot: 6, force: true })).toMatchObject({
      outcome: "cleared",
      proof: "forced",
      task_id: taskId,
      task_status: "interrupted"
    })
    expect(mutationGate(sandbox.lockDir, 6)).toBe("free")
  }, 30_000)

  it("an invalid guard is listed as such and needs force", async () => {
    fs.writeFileSync(guardPath(sandbox.lockDir, 4), "not json\n", { mode: 0o600 })
    expect(await leaseOf(4)).toMatchObject({ lease: "free", guard: "invalid", guard_task_id: null })
    expect((await callError(bridge.client, "lease.recover", { slot: 4 })).code).toBe(
      "WORKDIR_RECOVERY_REQUIRED"
    )
    expect(await call(bridge.client, "lease.recover", { slot: 4, force: true })).toEqual({
      slot: 4,
      workdir_alias: "w4",
      outcome: "cleared",
      proof: "forced",
      task_id: null,
      task_status: null
    })
    expect(mutationGate(sandbox.lockDir, 4)).toBe("free")
    // After a recovery the lease is released: a workspace-write task takes it again.
    const task = await call(
      bridge.client,
      "task.submit",
      submitParams({ prompt: "complete:after", profile: "workspace-write" }, "w4")
    )
    expect((await waitForStatus(bridge.client, task.task_id, TERMINAL)).status).toBe("succeeded")
  }, 30_000)
})
