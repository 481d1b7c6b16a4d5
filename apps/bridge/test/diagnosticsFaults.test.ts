/**
 * Failure isolation (spec v0.22 §7.4, §9.3, §12, §14 "Failure isolation"): the same scenario —
 * restart recovery of two tasks left by a SIGKILLed bridge (one guard provably stopped, one
 * not), then tasks that succeed, fail, wait on an approval, are cancelled, and hold and release
 * the writer lease — run on a normal recorder, on a recorder whose buffer throws from every
 * method, on one whose seal throws, and with a metric projection that throws. Every task
 * outcome, lease, guard and recovery is identical; a faulty recorder shows `record_failures`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { makeScriptedAdapter } from "@serverfs/adapters"
import type { TerminalOutcome } from "@serverfs/domain"
import { DIAGNOSTIC_LIMITS } from "@serverfs/domain"
import { type BridgeClientService, makeBridgeClient, serveRpc } from "@serverfs/rpc"
import { DiagnosticsBuffer, DiagnosticsRecorder, metricsSnapshot } from "@serverfs/telemetry-local"
import { Clock, Effect, Exit, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type MetricProjectionService, rpcHandlers, TaskService } from "../src/index.js"
import {
  call,
  getTask,
  killAll,
  makeSandbox,
  type Sandbox,
  type SubmitInput,
  startBridge,
  submitParams,
  TERMINAL,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { inProcessBridge, type ObservationOverrides, serveInProcess } from "./support/inProcess.js"
import {
  approveUntilEnd,
  diagnosticsSnapshot,
  diagnosticsTask,
  metricOf,
  metricValue
} from "./support/observability.js"

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

const fault = (): never => {
  throw new Error("injected diagnostics fault")
}

/** A buffer every method of which throws (a bug, a corrupt internal state). */
class ThrowingBuffer extends DiagnosticsBuffer {
  override stage = fault
  override staged = fault
  override admit = fault
  override admitRestarted = fault
  override begin = fault
  override end = fault
  override operation = fault
  override seal = fault
  override markUnavailable = fault
  override lookup = fault
  override state = fault
}

/** A buffer whose seal alone throws: the one write every admitted task must reach. */
class SealThrowingBuffer extends DiagnosticsBuffer {
  override seal = fault
}

/** A metric projection that throws an unexpected (non-Error, synchronous) value from everything. */
const throwingMetrics: MetricProjectionService = {
  taskTerminal: () => {
    throw { unexpected: "metric projection" }
  },
  queued: Effect.die({ unexpected: "metric projection" }),
  dequeued: () => {
    throw { unexpected: "metric projection" }
  },
  leftQueue: Effect.suspend((): Effect.Effect<void> => {
    throw { unexpected: "metric projection" }
  }),
  leaseAcquire: () => {
    throw { unexpected: "metric projection" }
  },
  recovery: () => {
    throw { unexpected: "metric projection" }
  }
}

const bufferLayer = (make: (millis: number) => DiagnosticsBuffer) =>
  DiagnosticsRecorder.layerWith(make(Effect.runSync(Clock.currentTimeMillis)))

const sandboxes: Array<Sandbox> = []
afterAll(async () => {
  await killAll()
  for (const box of sandboxes) box.remove()
})

/** A previous bridge (the real daemon) SIGKILLed with two workspace-write tasks running. */
const crashedState = async () => {
  const box = makeSandbox([
    { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
    { slot: 2, alias: "w2", mode: "workspace-write", runtimes: "fake" }
  ])
  sandboxes.push(box)
  const daemon = await startBridge(box.env())
  const ws = (prompt: string, workdir: string) =>
    call(daemon.client, "task.submit", submitParams({ prompt, profile: "workspace-write" }, workdir))
  const stopped = await ws("wait:", "w1")
  // `survive:` makes the scripted runtime unable to prove the old run stopped: its guard stays.
  const unprovable = await ws("survive:\nwait:", "w2")
  await waitForStatus(daemon.client, stopped.task_id, "running")
  await waitForStatus(daemon.client, unprovable.task_id, "running")
  await daemon.kill()
  return { box, crashed: [stopped.task_id, unprovable.task_id] as const }
}

/** The task plane in this process over the crashed state, reconciled as the daemon does, then served. */
const serveReconciled = async (box: Sandbox, observation: ObservationOverrides) => {
  const { layer } = inProcessBridge(
    box.env(),
    [Effect.runSync(makeScriptedAdapter())],
    undefined,
    observation
  )
  const runtime = ManagedRuntime.make(layer)
  const scope = Effect.runSync(Scope.make())
  await runtime.runPromise(
    Effect.flatMap(TaskService, (tasks) =>
      Effect.zipRight(
        tasks.reconcileAtStartup,
        Scope.extend(
          serveRpc({
            socketPath: box.socketPath,
            allowedPeer: { uid: null, gid: null },
            handle: rpcHandlers(tasks)
          }),
          scope
        )
      )
    )
  )
  return {
    client: makeBridgeClient({ socketPath: box.socketPath, timeoutSeconds: 30 }),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await runtime.dispose()
    }
  }
}

const outcomeOf = async (client: BridgeClientService, taskId: string) => {
  const view = await waitForStatus(client, taskId, TERMINAL)
  return `${view.status}${view.error_code === null ? "" : `:${view.error_code}`}`
}

const lockFiles = (box: Sandbox) => fs.readdirSync(box.lockDir).sort()

/** The recovery and lease metrics of this process (the in-process bridge shares its registry). */
const recoveryMetrics = async () => {
  const { series } = await Effect.runPromise(metricsSnapshot("-"))
  return {
    interrupted: metricValue(series, "serverfs_agent_recovery_total", { outcome: "interrupted" }),
    guardCleared: metricValue(series, "serverfs_agent_recovery_total", { outcome: "guard_cleared" }),
    guardKept: metricValue(series, "serverfs_agent_recovery_total", { outcome: "guard_kept" }),
    leaseRecoveryRequired: metricValue(series, "serverfs_agent_lease_acquire_seconds", {
      outcome: "recovery_required"
    })
  }
}

/** The scenario; what `result` holds must not depend on the recorder or the metrics. */
const scenario = async (observation: ObservationOverrides) => {
  const { box, crashed } = await crashedState()
  const metricsBefore = await recoveryMetrics()
  const bridge = await serveReconciled(box, observation)
  try {
    const c = bridge.client
    const submit = (input: SubmitInput, workdir = "w1") =>
      call(c, "task.submit", submitParams(input, workdir))
    const recovered = [await outcomeOf(c, crashed[0]), await outcomeOf(c, crashed[1])]
    const guardsAfterRecovery = lockFiles(box)

    const outcomes: Record<string, string> = {}
    outcomes.succeeded = await outcomeOf(c, (await submit({ prompt: "complete:done" })).task_id)
    outcomes.failed = await outcomeOf(c, (await submit({ prompt: "fail:boom" })).task_id)
    const asking = await submit({ prompt: "approval:one\napproval:two\ncomplete:done" })
    await approveUntilEnd(c, asking.task_id)
    outcomes.approved = await outcomeOf(c, asking.task_id)
    const cancelled = await submit({ prompt: "wait:", profile: "workspace-write" })
    await waitForStatus(c, cancelled.task_id, "running")
    await call(c, "task.cancel", { task_id: cancelled.task_id })
    outcomes.cancelled = await outcomeOf(c, cancelled.task_id)
    // The lease is released by every end: the next writer gets it.
    const writer = await waitUntil("the lease released", async () => {
      const r = await Effect.runPromise(
        Effect.either(
          c.call("task.submit", submitParams({ prompt: "complete:w", profile: "workspace-write" }, "w1"))
        )
      )
      return r._tag === "Right" ? r.right : r.left._tag === "WORKDIR_BUSY" ? undefined : r.left._tag
    })
    outcomes.writer = typeof writer === "string" ? writer : await outcomeOf(c, writer.task_id)
    const idem = await submit({ prompt: "complete:i", idempotency_key: "fault-idem" })
    const again = await submit({ prompt: "complete:i", idempotency_key: "fault-idem" })
    outcomes.idempotent = `${again.task_id === idem.task_id}:${await outcomeOf(c, idem.task_id)}`
    // The guard recovery kept (its run not provably stopped) still blocks its workdir's writers.
    const blocked = await Effect.runPromise(
      Effect.either(
        c.call("task.submit", submitParams({ prompt: "complete:b", profile: "workspace-write" }, "w2"))
      )
    )
    outcomes.guarded = blocked._tag === "Left" ? blocked.left._tag : "accepted"
    await waitUntil("the lease free again", async () =>
      (await getTask(c, idem.task_id)).status === "succeeded" ? true : undefined
    )

    const snapshot = await diagnosticsSnapshot(c)
    const recoveredTrace = await diagnosticsTask(c, crashed[0])
    const metricsAfter = await recoveryMetrics()
    const metrics = Object.fromEntries(
      Object.entries(metricsAfter).map(([k, v]) => [k, v - metricsBefore[k as keyof typeof metricsBefore]])
    )
    return {
      metrics,
      result: { recovered, guardsAfterRecovery, outcomes, guardsAtEnd: lockFiles(box) },
      snapshot,
      recoveredTrace,
      crashed
    }
  } finally {
    await bridge.close()
  }
}

describe("a recorder or metric fault never changes a task, a lease, a guard or a recovery", () => {
  let normal: Awaited<ReturnType<typeof scenario>>

  it("normal run: the reference outcomes; the restarted task has a `restarted` trace with its agent.recovery", async () => {
    normal = await scenario({})
    expect(normal.result.recovered).toEqual(["interrupted:BRIDGE_RESTARTED", "interrupted:BRIDGE_RESTARTED"])
    expect(normal.result.outcomes).toMatchObject({
      succeeded: "succeeded",
      failed: "failed:AGENT_PROVIDER_ERROR",
      approved: "succeeded",
      cancelled: "cancelled",
      writer: "succeeded",
      idempotent: "true:succeeded",
      guarded: "WORKDIR_RECOVERY_REQUIRED"
    })
    expect(normal.snapshot.counters.record_failures).toBe(0)
    // The same decisions, counted once each: two tasks interrupted by the restart, one guard
    // proven stopped and removed, one kept — which then refuses a writer (recovery_required).
    expect(normal.metrics).toEqual({
      interrupted: 2,
      guardCleared: 1,
      guardKept: 1,
      leaseRecoveryRequired: 1
    })
    expect(normal.snapshot.durable_tasks_predate_generation).toBe(true)
    const trace = normal.recoveredTrace
    if (trace.disposition !== "available") throw new Error(`no restarted trace: ${JSON.stringify(trace)}`)
    expect(trace.completeness).toBe("restarted")
    expect(trace.operations.map((o) => [o.kind, o.outcome])).toContainEqual(["agent.recovery", "interrupted"])
    expect(trace.seal?.outcome satisfies TerminalOutcome | undefined).toBe("interrupted")
  })

  const faulty: ReadonlyArray<readonly [string, ObservationOverrides, boolean]> = [
    [
      "a buffer that throws from every method",
      { recorder: bufferLayer((ms) => new ThrowingBuffer(ms)) },
      true
    ],
    ["a buffer whose seal throws", { recorder: bufferLayer((ms) => new SealThrowingBuffer(ms)) }, true],
    ["a metric projection that throws", { metrics: throwingMetrics }, false]
  ]
  for (const [name, observation, countsFailures] of faulty) {
    it(`${name}: identical outcomes, leases, guards and recovery`, async () => {
      const run = await scenario(observation)
      expect(run.result).toEqual(normal.result)
      if (countsFailures) expect(run.snapshot.counters.record_failures).toBeGreaterThan(0)
      // A recorder fault does not touch the metrics either: they count the same decisions.
      if (observation.metrics === undefined) expect(run.metrics).toEqual(normal.metrics)
      // Never a fabricated complete trace for the restarted task.
      const trace = run.recoveredTrace
      if (trace.disposition === "available") expect(trace.completeness).not.toBe("complete")
    })
  }
})

describe("admission failure (spec v0.22 §7.2): no room for a seal → no partial slot, the task goes on", () => {
  let box: Sandbox
  let server: Awaited<ReturnType<typeof serveInProcess>>

  beforeAll(async () => {
    box = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    sandboxes.push(box)
    fs.mkdirSync(path.dirname(box.socketPath), { recursive: true, mode: 0o700 })
    // Two records in all: one running task's reserved seal and its queue wait fill the buffer.
    const tiny = { ...DIAGNOSTIC_LIMITS, maxRecords: 2 }
    server = await serveInProcess(box.env(), box.socketPath, [Effect.runSync(makeScriptedAdapter())], {
      recorder: bufferLayer((ms) => new DiagnosticsBuffer(ms, tiny))
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("the second task is not admitted (capacity_exhausted, counted) yet runs and ends exactly as it would", async () => {
    const c = server.client
    const holder = await call(c, "task.submit", submitParams({ prompt: "wait:" }, "w1"))
    await waitForStatus(c, holder.task_id, "running")
    const before = await metricOf(c, "serverfs_agent_tasks_terminal_total", { outcome: "succeeded" })
    const refused = await call(c, "task.submit", submitParams({ prompt: "complete:still runs" }, "w1"))
    const view = await waitForStatus(c, refused.task_id, TERMINAL)
    expect(view).toMatchObject({ status: "succeeded", final_response: "still runs" })
    expect(await diagnosticsTask(c, refused.task_id)).toEqual({
      catalog_version: 1,
      disposition: "not_retained",
      task_id: refused.task_id,
      reason: "capacity_exhausted"
    })
    const snapshot = await diagnosticsSnapshot(c)
    expect(snapshot.counters.admission_failures).toBeGreaterThanOrEqual(1)
    expect(snapshot.retained_records).toBeLessThanOrEqual(2)
    // The metric still counts the task that has no trace.
    expect(await metricOf(c, "serverfs_agent_tasks_terminal_total", { outcome: "succeeded" })).toBe(
      before + 1
    )
    await call(c, "task.cancel", { task_id: holder.task_id })
    await waitForStatus(c, holder.task_id, TERMINAL)
  })
})
