/**
 * The bridge's diagnostics at its seams (spec v0.22 §5.3, §6, §7.3, §8, §9, §12, §14), through
 * the real RPC server and client in this process, with the scripted runtime: the terminal metric,
 * the task status and the seal agree for every terminal outcome (a prefix-truncated task
 * included); execution and external waits are separate multi-segment sequences; a busy lease is
 * not lease wait; an idempotent resubmission touches no slot; and nothing a caller sent — prompt,
 * path, workdir, model, correlation or idempotency key — reaches a diagnostic or a metric.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { makeScriptedAdapter, type ProviderAdapter, SCRIPTED_MODELS } from "@serverfs/adapters"
import { OperationKind, type TerminalOutcome } from "@serverfs/domain"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  call,
  callError,
  getTask,
  makeSandbox,
  type Sandbox,
  type SubmitInput,
  submitParams,
  TERMINAL,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { type InProcessServer, serveInProcess } from "./support/inProcess.js"
import {
  approveUntilEnd,
  diagnosticsSnapshot,
  diagnosticsTask,
  jsonText,
  metricOf,
  metricsSnapshot,
  sealedTrace
} from "./support/observability.js"

const TERMINAL_TOTAL = "serverfs_agent_tasks_terminal_total"
const WD = "sentinelwd"
/** The privacy test names a model of its own; this runtime lists it besides its fixed two. */
const SENTINEL_MODEL = "MODEL-SENTINEL-77a"
const scriptedWithSentinelModel = (): ProviderAdapter => {
  const adapter = Effect.runSync(makeScriptedAdapter())
  return {
    ...adapter,
    listModels: () =>
      Effect.succeed({
        catalog: SCRIPTED_MODELS.catalog,
        accepted: new Set([...SCRIPTED_MODELS.accepted, SENTINEL_MODEL])
      })
  }
}

let sandbox: Sandbox
let server: InProcessServer

beforeAll(async () => {
  sandbox = makeSandbox([{ slot: 1, alias: WD, mode: "workspace-write", runtimes: "fake" }])
  fs.mkdirSync(path.dirname(sandbox.socketPath), { recursive: true, mode: 0o700 })
  fs.mkdirSync(path.join(sandbox.workdir(WD), "path-sentinel-dir"))
  server = await serveInProcess(sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "20" }), sandbox.socketPath, [
    scriptedWithSentinelModel()
  ])
}, 60_000)

afterAll(async () => {
  await server?.close()
  sandbox?.remove()
})

const c = () => server.client
const submit = (input: SubmitInput) => call(c(), "task.submit", submitParams(input, WD))
const terminalCount = (outcome: string) =>
  metricOf(c(), TERMINAL_TOTAL, { outcome, runtime_family: "unknown" })

/** Run one task to its end; the status, the metric increment and the seal must agree. */
const expectConsistentEnd = async (
  input: SubmitInput,
  drive: (taskId: string) => Promise<unknown>,
  expected: TerminalOutcome
) => {
  const before = await terminalCount(expected)
  const { task_id } = await submit(input)
  await drive(task_id)
  const view = await waitForStatus(c(), task_id, TERMINAL)
  expect(view.status).toBe(expected)
  const trace = await sealedTrace(c(), task_id)
  expect(trace.status).toBe(expected)
  expect(trace.seal?.outcome).toBe(expected)
  expect(trace.seal?.reason_code).toBe(
    { succeeded: "ok", cancelled: "safe", failed: "degraded", interrupted: "unavailable" }[expected]
  )
  await waitUntil("the terminal metric", async () =>
    (await terminalCount(expected)) === before + 1 ? true : undefined
  )
  return trace
}

describe("one terminal transition: task status == terminal metric outcome == seal outcome", () => {
  it("succeeded", async () => {
    const trace = await expectConsistentEnd({ prompt: "complete:done" }, async () => {}, "succeeded")
    expect(trace.completeness).toBe("complete")
    expect(trace.runtime_family).toBe("unknown")
    expect(trace.operations.map((o) => o.kind)).toEqual([
      "agent.queue_wait",
      "agent.runtime_start",
      "agent.execution",
      "agent.finalization"
    ])
  })

  it("failed", async () => {
    await expectConsistentEnd({ prompt: "fail:boom" }, async () => {}, "failed")
  })

  it("cancelled (while running), the open execution closed by the seal", async () => {
    const trace = await expectConsistentEnd(
      { prompt: "wait:" },
      async (taskId) => {
        await waitForStatus(c(), taskId, "running")
        await call(c(), "task.cancel", { task_id: taskId })
      },
      "cancelled"
    )
    expect(trace.operations.map((o) => o.kind)).toContain("agent.execution")
  })

  it("cancelled while waiting on an approval: the external wait ends `cancelled`", async () => {
    const trace = await expectConsistentEnd(
      { prompt: "approval:make build" },
      async (taskId) => {
        await waitForStatus(c(), taskId, "waiting_for_approval")
        await call(c(), "task.cancel", { task_id: taskId })
      },
      "cancelled"
    )
    const wait = trace.operations.find((o) => o.kind === "agent.waiting_external")
    expect(wait).toMatchObject({ interaction: "approval", outcome: "cancelled" })
  })

  it("prefix-truncated: 40 approvals overflow the 63 ordinary records; the seal still agrees", async () => {
    const script = `${"approval:step\n".repeat(40)}complete:done`
    const trace = await expectConsistentEnd(
      { prompt: script },
      (taskId) => approveUntilEnd(c(), taskId),
      "succeeded"
    )
    expect(trace.completeness).toBe("truncated_prefix")
    expect(trace.operations).toHaveLength(63)
    // A continuous prefix: sequences 0..62 (or 1..63), no hole in the middle.
    const sequences = trace.operations.map((o) => o.sequence)
    expect(sequences).toEqual(sequences.map((_, i) => sequences[0]! + i))
    expect((await diagnosticsSnapshot(c())).counters.truncated_tasks).toBeGreaterThanOrEqual(1)
  }, 120_000)
})

describe("interrupted: an unanswered approval expires", () => {
  it("task status == terminal metric outcome == seal outcome == interrupted; the external wait ends `expired`", async () => {
    // Its own bridge: a one-second interaction lifetime would race the other suites' answers.
    const box = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    fs.mkdirSync(path.dirname(box.socketPath), { recursive: true, mode: 0o700 })
    const expiring = await serveInProcess(
      box.env({ SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "1" }),
      box.socketPath,
      [Effect.runSync(makeScriptedAdapter())]
    )
    try {
      const client = expiring.client
      const count = () =>
        metricOf(client, TERMINAL_TOTAL, { outcome: "interrupted", runtime_family: "unknown" })
      const before = await count()
      const { task_id } = await call(
        client,
        "task.submit",
        submitParams({ prompt: "approval:never answered" }, "w1")
      )
      const view = await waitForStatus(client, task_id, TERMINAL)
      expect(view).toMatchObject({ status: "interrupted", error_code: "AGENT_INTERACTION_TIMED_OUT" })
      const trace = await sealedTrace(client, task_id)
      expect(trace.seal).toMatchObject({ outcome: "interrupted", reason_code: "unavailable" })
      expect(trace.operations.find((o) => o.kind === "agent.waiting_external")).toMatchObject({
        interaction: "approval",
        outcome: "expired"
      })
      await waitUntil("the terminal metric", async () => ((await count()) === before + 1 ? true : undefined))
    } finally {
      await expiring.close()
      box.remove()
    }
  })
})

describe("segments and rollups (spec v0.22 §5.3)", () => {
  it("execution / external wait / execution / …: every segment kept, external wait excluded from execution", async () => {
    const acquired = () => metricOf(c(), "serverfs_agent_lease_acquire_seconds", { outcome: "acquired" })
    const acquiredBefore = await acquired()
    const { task_id } = await submit({
      prompt: "approval:one\napproval:two\ncomplete:done",
      profile: "workspace-write"
    })
    // A measurable human wait before each answer (no timing assertion: only that it counts as waiting).
    expect(await approveUntilEnd(c(), task_id, 50)).toBe("succeeded")
    const trace = await sealedTrace(c(), task_id)
    expect(trace.operations.map((o) => o.kind)).toEqual([
      "agent.lease_acquire",
      "agent.queue_wait",
      "agent.runtime_start",
      "agent.execution",
      "agent.waiting_external",
      "agent.execution",
      "agent.waiting_external",
      "agent.execution",
      "agent.finalization"
    ])
    const sum = (kind: string) =>
      trace.operations.filter((o) => o.kind === kind).reduce((s, o) => s + o.duration_seconds, 0)
    const waits = trace.operations.filter((o) => o.kind === "agent.waiting_external")
    for (const w of waits) expect(w).toMatchObject({ interaction: "approval", outcome: "ok" })
    // The lease outcome the operation shows is the one the metric counted, from the same exit.
    expect(trace.operations.find((o) => o.kind === "agent.lease_acquire")?.outcome).toBe("acquired")
    expect(await acquired()).toBe(acquiredBefore + 1)
    const r = trace.rollups
    expect(r.external_wait_seconds).toBeCloseTo(sum("agent.waiting_external"), 6)
    expect(r.external_wait_seconds).toBeGreaterThanOrEqual(0.1)
    expect(r.active_execution_seconds).toBeCloseTo(sum("agent.execution"), 6)
    expect(r.lease_wait_seconds).toBeCloseTo(sum("agent.lease_acquire"), 6)
    expect(r.accounted_seconds).toBeCloseTo(
      trace.operations.reduce((s, o) => s + o.duration_seconds, 0),
      6
    )
    expect(r.unaccounted_seconds).toBeCloseTo(r.wall_clock_seconds - r.accounted_seconds, 6)
    expect(r.wall_clock_seconds).toBe(trace.seal?.wall_clock_seconds)
    expect(trace.completeness).toBe("complete")
  })

  it("a busy lease is a rejection: counted busy, no task and no slot, never lease wait", async () => {
    const { task_id: holder } = await submit({ prompt: "wait:", profile: "workspace-write" })
    await waitForStatus(c(), holder, "running")
    const busyBefore = await metricOf(c(), "serverfs_agent_lease_acquire_seconds", { outcome: "busy" })
    const acquiredBefore = await metricOf(c(), "serverfs_agent_lease_acquire_seconds", {
      outcome: "acquired"
    })
    const slotsBefore = (await diagnosticsSnapshot(c())).retained_tasks
    const refused = await callError(
      c(),
      "task.submit",
      submitParams({ prompt: "complete:x", profile: "workspace-write" }, WD)
    )
    expect(refused.code).toBe("WORKDIR_BUSY")
    expect(await metricOf(c(), "serverfs_agent_lease_acquire_seconds", { outcome: "busy" })).toBe(
      busyBefore + 1
    )
    expect(await metricOf(c(), "serverfs_agent_lease_acquire_seconds", { outcome: "acquired" })).toBe(
      acquiredBefore
    )
    expect((await diagnosticsSnapshot(c())).retained_tasks).toBe(slotsBefore)
    const trace = await diagnosticsTask(c(), holder)
    if (trace.disposition !== "available") throw new Error("the holder has a trace")
    const leaseOps = trace.operations.filter((o) => o.kind === "agent.lease_acquire")
    expect(leaseOps.map((o) => o.outcome)).toEqual(["acquired"])
    expect(trace.rollups.lease_wait_seconds).toBeCloseTo(leaseOps[0]!.duration_seconds, 6)
    await call(c(), "task.cancel", { task_id: holder })
    await sealedTrace(c(), holder)
  })
})

describe("slots and dispositions", () => {
  it("an idempotent resubmission returns the task and adds no slot, no record, no operation", async () => {
    const first = await submit({ prompt: "complete:once", idempotency_key: "idem-replay-1" })
    const before = await sealedTrace(c(), first.task_id)
    const snapshot = await diagnosticsSnapshot(c())
    const queuedBefore = await metricOf(c(), "serverfs_agent_queue_wait_seconds")
    const again = await submit({ prompt: "complete:once", idempotency_key: "idem-replay-1" })
    expect(again.task_id).toBe(first.task_id)
    const after = await diagnosticsSnapshot(c())
    expect(after.retained_tasks).toBe(snapshot.retained_tasks)
    expect(after.retained_records).toBe(snapshot.retained_records)
    expect(await diagnosticsTask(c(), first.task_id)).toEqual(before)
    expect(await metricOf(c(), "serverfs_agent_queue_wait_seconds")).toBe(queuedBefore)
  })

  it("a task id the store does not know is unknown_task (nothing else said)", async () => {
    const id = `agt_${"0".repeat(24)}`
    expect(await diagnosticsTask(c(), id)).toEqual({
      catalog_version: 1,
      disposition: "unknown_task",
      task_id: id
    })
  })

  it("the queue depth balances: nothing created here is left counted as queued", async () => {
    await waitUntil("every task ended", async () =>
      (await diagnosticsSnapshot(c())).active_tasks === 0 ? true : undefined
    )
    expect(await metricOf(c(), "serverfs_agent_queue_depth")).toBe(0)
  })

  it("every RPC call is counted by method and outcome (a frozen code, never the params)", async () => {
    const before = await metricOf(c(), "serverfs_bridge_rpc_calls_total", {
      method: "task.get",
      outcome: "AGENT_TASK_NOT_FOUND"
    })
    await callError(c(), "task.get", { task_id: `agt_${"1".repeat(24)}` })
    expect(
      await metricOf(c(), "serverfs_bridge_rpc_calls_total", {
        method: "task.get",
        outcome: "AGENT_TASK_NOT_FOUND"
      })
    ).toBe(before + 1)
    expect(
      await metricOf(c(), "serverfs_bridge_rpc_calls_total", {
        method: "diagnostics.snapshot",
        outcome: "ok"
      })
    ).toBeGreaterThan(0)
  })
})

describe("privacy and persistence (spec v0.22 §8.1, §8.2, §12)", () => {
  const SENTINELS = {
    prompt: "PROMPT-SENTINEL-4f1",
    result: "RESULT-SENTINEL-9c2",
    path: "path-sentinel-dir",
    model: SENTINEL_MODEL,
    correlation: "CORRELATION-SENTINEL-3b8",
    idempotency: "IDEMPOTENCY-SENTINEL-d05"
  }

  it("no prompt, result, path, workdir, model, correlation or idempotency text in any snapshot, task diagnostic or metric", async () => {
    const { task_id } = await call(c(), "task.submit", {
      ...submitParams(
        {
          prompt: `say:${SENTINELS.prompt}\ncomplete:${SENTINELS.result}`,
          path: SENTINELS.path,
          profile: "workspace-write",
          correlation_id: SENTINELS.correlation,
          idempotency_key: SENTINELS.idempotency
        },
        WD
      ),
      model: SENTINELS.model
    })
    const trace = await sealedTrace(c(), task_id)
    const snapshot = await diagnosticsSnapshot(c())
    const metrics = await metricsSnapshot(c())
    const texts = { trace: jsonText(trace), snapshot: jsonText(snapshot), metrics: jsonText(metrics) }
    for (const [where, text] of Object.entries(texts)) {
      for (const sentinel of [...Object.values(SENTINELS), WD, sandbox.base])
        expect(text, `${where}: ${sentinel}`).not.toContain(sentinel)
    }
    // The snapshot names no task at all; the task answer echoes only the id it was asked for.
    expect(texts.snapshot).not.toContain(task_id)
    expect(texts.metrics).not.toContain(task_id)
    expect(Object.keys(trace).sort()).toEqual(
      [
        "catalog_version",
        "completeness",
        "disposition",
        "operations",
        "rollups",
        "runtime_family",
        "seal",
        "status",
        "task_id"
      ].sort()
    )
  })

  it("no diagnostic identity or record in SQLite, events, results or manifests", async () => {
    await waitUntil("every task ended", async () =>
      (await diagnosticsSnapshot(c())).active_tasks === 0 ? true : undefined
    )
    const kinds = OperationKind.literals
    const markers = [
      ...kinds,
      "trace_id",
      "span_id",
      "DiagnosticStaging",
      "waiting_external",
      "queue_wait",
      "catalog_version"
    ]
    const state = sandbox.stateDir
    for (const name of fs.readdirSync(state)) {
      const file = path.join(state, name)
      if (!fs.statSync(file).isFile()) continue
      const bytes = fs.readFileSync(file).toString("latin1")
      for (const marker of markers) expect(bytes, `${name}: ${marker}`).not.toContain(marker)
    }
    const { task_id } = await submit({ prompt: "complete:done" })
    await sealedTrace(c(), task_id)
    const view = await getTask(c(), task_id)
    const events = await allEvents(c(), task_id)
    const durable = jsonText({ view, events })
    for (const marker of markers) expect(durable, marker).not.toContain(marker)
  })
})
