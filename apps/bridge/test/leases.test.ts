/**
 * The workdir writer lease and the recovery guard (spec v0.3 §21, v0.7 §2.3, bridge-internals
 * §9/§10), observed from outside the bridge the way serverfs-mcp observes them: flock on
 * `<lock dir>/NN.lock` from another process, and the guard file `active/NN`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
  modeOf,
  type Sandbox,
  type SubmitInput,
  startBridge,
  submitParams,
  TERMINAL,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { flockFree, guardPath, mutationGate, readGuard } from "./support/mcpSide.js"
import { nonTerminalTaskIds, plantTask, writeGuard } from "./support/store.js"

/**
 * One daemon for the file; every test works on its own workdir slot (w<N> is slot N), so a
 * guard a test leaves behind on purpose never meets another test.
 */
let sandbox: Sandbox
let bridge: Bridge
const SLOTS = 13

beforeAll(async () => {
  assertBuilt()
  sandbox = makeSandbox(
    Array.from({ length: SLOTS }, (_, i) => ({
      slot: i + 1,
      alias: `w${i + 1}`,
      mode: "workspace-write" as const,
      runtimes: "fake"
    }))
  )
  bridge = await startBridge(sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "50" }))
}, 60_000)
afterAll(async () => {
  await killAll()
  sandbox?.remove()
})

const c = () => bridge.client
const submit = (slot: number, input: SubmitInput) =>
  call(c(), "task.submit", submitParams({ profile: "workspace-write", ...input }, `w${slot}`))
const submitError = (slot: number, input: SubmitInput) =>
  callError(c(), "task.submit", submitParams({ profile: "workspace-write", ...input }, `w${slot}`))

/** The run's cleanup (after a cancel) is done once another process can take the flock. */
const untilLeaseFree = (slot: number) =>
  waitUntil(`slot ${slot}'s lease to be released`, () =>
    flockFree(sandbox.lockDir, slot) ? true : undefined
  )

/** The non-terminal tasks of one workdir. */
const liveTasksOf = async (slot: number) => {
  const ids = await nonTerminalTaskIds(sandbox.stateDir)
  const views = await Promise.all(ids.map((id) => getTask(c(), id)))
  return views.filter((v) => v.workdir_slot === slot).map((v) => v.task_id)
}

describe("the writer lease", () => {
  it("a workspace-write task holds flock on <lock dir>/NN.lock for its whole turn, released after cancel and cleanup", async () => {
    const slot = 1
    expect(flockFree(sandbox.lockDir, slot)).toBe(true)
    const { task_id } = await submit(slot, { prompt: "approval:go\nwait:" })
    // From submission on: queued, running, waiting for the human, running again.
    expect(flockFree(sandbox.lockDir, slot)).toBe(false)
    const waiting = await waitForStatus(c(), task_id, "waiting_for_approval")
    expect(flockFree(sandbox.lockDir, slot)).toBe(false)
    expect(mutationGate(sandbox.lockDir, slot)).toBe("WORKDIR_BUSY")
    await call(c(), "task.approval.respond", {
      task_id,
      request_id: waiting.pending_request?.request_id ?? "",
      decision: "approve_once"
    })
    await waitForStatus(c(), task_id, "running")
    expect(flockFree(sandbox.lockDir, slot)).toBe(false)
    // The other slots' lock files are not affected.
    expect(flockFree(sandbox.lockDir, 16)).toBe(true)

    await call(c(), "task.cancel", { task_id })
    await untilLeaseFree(slot)
    expect(mutationGate(sandbox.lockDir, slot)).toBe("free")
    expect((await getTask(c(), task_id)).status).toBe("cancelled")
    // The lease can be taken again.
    const next = await submit(slot, { prompt: "complete:again" })
    expect((await waitForStatus(c(), next.task_id, TERMINAL)).status).toBe("succeeded")
    await untilLeaseFree(slot)
  })

  it("a second workspace-write submit is WORKDIR_BUSY and inserts nothing; review tasks, other slots and idempotent replays still go through", async () => {
    const slot = 2
    const first = await submit(slot, { prompt: "wait:", idempotency_key: "first" })
    await waitForStatus(c(), first.task_id, "running")
    const busy = await submitError(slot, { prompt: "complete:second" })
    expect(busy.code).toBe("WORKDIR_BUSY")
    expect(busy.message).not.toContain(sandbox.base)
    expect(await liveTasksOf(slot)).toEqual([first.task_id])
    // The replay of the running task's own submission is not "another writer".
    expect(await submit(slot, { prompt: "wait:", idempotency_key: "first" })).toMatchObject({
      task_id: first.task_id,
      status: "running"
    })
    // Another slot has its own lease.
    const other = await submit(3, { prompt: "complete:other slot" })
    expect((await waitForStatus(c(), other.task_id, TERMINAL)).status).toBe("succeeded")
    // A review task takes no lease.
    const review = await submit(slot, { prompt: "complete:review", profile: "review" })
    expect((await waitForStatus(c(), review.task_id, TERMINAL)).status).toBe("succeeded")
    expect(await liveTasksOf(slot)).toEqual([first.task_id])
    await call(c(), "task.cancel", { task_id: first.task_id })
    await untilLeaseFree(slot)
  })

  it("a review task takes no lease and publishes no guard", async () => {
    const slot = 4
    const review = await submit(slot, { prompt: "wait:", profile: "review" })
    await waitForStatus(c(), review.task_id, "running")
    expect(flockFree(sandbox.lockDir, slot)).toBe(true)
    expect(fs.existsSync(guardPath(sandbox.lockDir, slot))).toBe(false)
    expect(mutationGate(sandbox.lockDir, slot)).toBe("free")
    // A writer can start beside it.
    const writer = await submit(slot, { prompt: "wait:" })
    await waitForStatus(c(), writer.task_id, "running")
    expect(flockFree(sandbox.lockDir, slot)).toBe(false)
    await call(c(), "task.cancel", { task_id: writer.task_id })
    await call(c(), "task.cancel", { task_id: review.task_id })
    await untilLeaseFree(slot)
  })
})

describe("the recovery guard", () => {
  it("active/NN exists while the task runs — canonical JSON, task id and runtime, no host path — and is removed after a normal end", async () => {
    const slot = 5
    const { task_id } = await submit(slot, {
      prompt: `say:${sandbox.workdir("w5")}\napproval:go`,
      correlation_id: "g-1"
    })
    const waiting = await waitForStatus(c(), task_id, "waiting_for_approval")
    const file = guardPath(sandbox.lockDir, slot)
    expect(modeOf(file)).toBe(0o600)
    const { text, json } = readGuard(sandbox.lockDir, slot)
    const guard = json as Record<string, unknown>
    expect(text.endsWith("}\n")).toBe(true)
    expect(Object.keys(guard)).toEqual([...Object.keys(guard)].sort())
    expect(text).toBe(`${JSON.stringify(guard)}\n`)
    expect(guard).toMatchObject({
      schema_version: 1,
      slot,
      task_id,
      runtime: "fake",
      workdir_alias: "w5",
      correlation_id: "g-1"
    })
    expect(typeof guard.created_at).toBe("string")
    expect(text).not.toContain(sandbox.base)
    // Published atomically: no temp file is left beside it.
    expect(fs.readdirSync(path.dirname(file)).filter((n) => n.startsWith("."))).toEqual([])

    await call(c(), "task.approval.respond", {
      task_id,
      request_id: waiting.pending_request?.request_id ?? "",
      decision: "approve_once"
    })
    await waitForStatus(c(), task_id, "succeeded")
    await untilLeaseFree(slot)
    expect(fs.existsSync(file)).toBe(false)
    expect(mutationGate(sandbox.lockDir, slot)).toBe("free")
  })

  it("after a cancel the guard is removed once the scripted runtime proves it stopped", async () => {
    const slot = 6
    const { task_id } = await submit(slot, { prompt: "wait:" })
    await waitForStatus(c(), task_id, "running")
    expect(fs.existsSync(guardPath(sandbox.lockDir, slot))).toBe(true)
    await call(c(), "task.cancel", { task_id })
    await untilLeaseFree(slot)
    expect(fs.existsSync(guardPath(sandbox.lockDir, slot))).toBe(false)
    const next = await submit(slot, { prompt: "complete:next" })
    expect((await waitForStatus(c(), next.task_id, TERMINAL)).status).toBe("succeeded")
  })

  it("survive: the guard stays after cancel (provider not proven stopped); writers get WORKDIR_RECOVERY_REQUIRED", async () => {
    const slot = 7
    const { task_id } = await submit(slot, { prompt: "survive:\nwait:" })
    await waitForStatus(c(), task_id, "running")
    await call(c(), "task.cancel", { task_id })
    await untilLeaseFree(slot)
    expect((await getTask(c(), task_id)).status).toBe("cancelled")
    expect((readGuard(sandbox.lockDir, slot).json as { task_id: string }).task_id).toBe(task_id)
    // What serverfs-mcp sees: the flock is free, the guard blocks mutations.
    expect(mutationGate(sandbox.lockDir, slot)).toBe("WORKDIR_RECOVERY_REQUIRED")
    const blocked = await submitError(slot, { prompt: "complete:x" })
    expect(blocked.code).toBe("WORKDIR_RECOVERY_REQUIRED")
    expect(blocked.message).not.toContain(sandbox.base)
    expect(await liveTasksOf(slot)).toEqual([])
    // Still blocked on a second try; review work is unaffected.
    expect((await submitError(slot, { prompt: "complete:x" })).code).toBe("WORKDIR_RECOVERY_REQUIRED")
    const review = await submit(slot, { prompt: "complete:r", profile: "review" })
    expect((await waitForStatus(c(), review.task_id, TERMINAL)).status).toBe("succeeded")
    expect(fs.existsSync(guardPath(sandbox.lockDir, slot))).toBe(true)
  })

  const placements: ReadonlyArray<readonly [string, number, (file: string) => void]> = [
    ["garbage", 8, (file) => fs.writeFileSync(file, "not json\n", { mode: 0o600 })],
    [
      "a JSON object of the wrong shape",
      9,
      (file) => fs.writeFileSync(file, '{"task_id":1}\n', { mode: 0o600 })
    ],
    ["a directory", 10, (file) => fs.mkdirSync(file)],
    ["a symlink", 11, (file) => fs.symlinkSync("/etc/hostname", file)],
    [
      "a valid guard of an unknown task",
      12,
      () => writeGuard(sandbox.lockDir, 12, { task_id: "agt_0123456789abcdef01234567", workdir_alias: "w12" })
    ]
  ]
  it.each(placements)(
    "a hand-placed guard (%s) makes writers WORKDIR_RECOVERY_REQUIRED",
    async (_, slot, place) => {
      place(guardPath(sandbox.lockDir, slot))
      expect(mutationGate(sandbox.lockDir, slot)).toBe("WORKDIR_RECOVERY_REQUIRED")
      const e = await submitError(slot, { prompt: "complete:x" })
      expect(e.code).toBe("WORKDIR_RECOVERY_REQUIRED")
      expect(await liveTasksOf(slot)).toEqual([])
      expect(flockFree(sandbox.lockDir, slot)).toBe(true)
      // The bridge never removes what it cannot account for.
      expect(() => fs.lstatSync(guardPath(sandbox.lockDir, slot))).not.toThrow()
      const review = await submit(slot, { prompt: "complete:r", profile: "review" })
      expect((await waitForStatus(c(), review.task_id, TERMINAL)).status).toBe("succeeded")
    }
  )

  it("lazy reconciliation: a guard whose provider is proven inactive is cleared by the next submit, which proceeds; the old task becomes interrupted (AGENT_PROVIDER_INACTIVE)", async () => {
    const slot = 13
    // A writer left by another bridge process: waiting in the database, guard on the slot, no
    // lease held. The scripted runtime proves such a turn is not running here.
    const old = await plantTask(sandbox.stateDir, {
      status: "waiting_for_approval",
      workdirAlias: "w13",
      slot,
      profile: "workspace-write",
      sessionId: "fake-session-old"
    })
    writeGuard(sandbox.lockDir, slot, {
      task_id: old,
      workdir_alias: "w13",
      native_session_id: "fake-session-old"
    })
    expect(mutationGate(sandbox.lockDir, slot)).toBe("WORKDIR_RECOVERY_REQUIRED")

    const { task_id } = await submit(slot, { prompt: "wait:" })
    const oldView = await getTask(c(), old)
    expect(oldView.status).toBe("interrupted")
    expect(oldView.error_code).toBe("AGENT_PROVIDER_INACTIVE")
    expect(
      (await allEvents(c(), old)).filter((e) => e.event_type === "task.interrupted").map((e) => e.payload)
    ).toEqual([{ error_code: "AGENT_PROVIDER_INACTIVE" }])
    await waitForStatus(c(), task_id, "running")
    expect((readGuard(sandbox.lockDir, slot).json as { task_id: string }).task_id).toBe(task_id)
    expect(eventTypes(await allEvents(c(), task_id))).toContain("turn.started")
    await call(c(), "task.cancel", { task_id })
    await untilLeaseFree(slot)
    expect(mutationGate(sandbox.lockDir, slot)).toBe("free")
  })

  it("lazy reconciliation: a guard whose provider cannot be proven stopped stays, and the old task is left alone", async () => {
    const slot = 3
    const old = await plantTask(sandbox.stateDir, {
      status: "running",
      workdirAlias: "w3",
      slot,
      profile: "workspace-write",
      sessionId: "fake-session-old-survivor"
    })
    writeGuard(sandbox.lockDir, slot, {
      task_id: old,
      workdir_alias: "w3",
      native_session_id: "fake-session-old-survivor"
    })
    expect((await submitError(slot, { prompt: "complete:x" })).code).toBe("WORKDIR_RECOVERY_REQUIRED")
    const oldView = await getTask(c(), old)
    expect(oldView.status).toBe("running")
    expect(oldView.error_code).toBeNull()
    expect(fs.existsSync(guardPath(sandbox.lockDir, slot))).toBe(true)
  })
})
