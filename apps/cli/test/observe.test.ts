import { BRIDGE_METHODS, DIAGNOSTIC_LIMITS, FROZEN_ERRORS } from "@serverfs/domain"
import { type AgentStack, startAgentStack } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { keys, operatorCli, parseJsonObject, type Run, submitScripted, waitStatus } from "./support.js"

/**
 * The observe commands end to end (issue 10, spec v0.22 §8): the real `serverfs` binary against
 * a real bridge with the scripted runtime. `diagnostics task` in its bridge dispositions —
 * available (a finished task: complete, sealed, its phases in order, the human view showing the
 * same facts as the JSON), unknown_task, not_retained/bridge_restarted after a restart on the same
 * state; `diagnostics snapshot` without task identity; `metrics` counting the task's outcome with
 * RPC method labels from the contract only; the --json key sets pinned; and a privacy sentinel:
 * what the caller sent (prompt, path, model, correlation id, idempotency key) and the host path
 * appear in no output of these commands, nor of `tasks list` / `tasks show`.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

const SENTINEL = "OBSV-SENTINEL"
const MODEL = "scripted-small"
const TASK_ID = /agt_[0-9a-f]{24}/

let stack: AgentStack
const operator = operatorCli(() => stack)
const { run: cli, json: cliJson } = operator

/** The finished task every test below reads (submitted with the sentinel everywhere it can be). */
let finished = ""

const ok = (run: Run): Run => {
  expect(run.code, `${run.stdout}${run.stderr}`).toBe(0)
  expect(run.stderr).toBe("")
  return run
}

/** A human `key: value` line of the diagnostics rendering, its value exactly. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const line = (key: string, value: unknown) =>
  new RegExp(`^${literal(key)}:\\s+${literal(String(value))}$`, "m")

beforeAll(async () => {
  stack = await startAgentStack({
    prefix: "serverfs-cli-observe-",
    setup: (tree) => {
      tree.dir(`${SENTINEL}-PATH`)
    }
  })
  finished = await submitScripted(stack, `say:hello ${SENTINEL}-PROMPT\ncomplete:final ${SENTINEL}-RESULT`, {
    profile: "workspace-write",
    path: `${SENTINEL}-PATH`,
    // A model the scripted runtime lists (an unlisted one is refused at submit); it is checked
    // below like the sentinel.
    model: MODEL,
    correlation_id: `${SENTINEL}-CORRELATION`,
    idempotency_key: `${SENTINEL}-IDEMPOTENCY`
  })
  await waitStatus(operator, finished, ["succeeded"])
})
afterAll(async () => {
  await stack?.stop()
  const all = operator.outputs().join("\n")
  expect(all).not.toContain(SENTINEL)
  expect(all).not.toContain(MODEL)
  expect(all).not.toContain(stack.tree.base)
})

describe("serverfs diagnostics task", () => {
  it("a finished scripted task: available, complete, sealed succeeded, its phases in order", async () => {
    const trace = await cliJson("diagnostics", "task", finished)
    expect(keys(trace)).toEqual(
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
    expect(trace).toMatchObject({
      catalog_version: 1,
      disposition: "available",
      task_id: finished,
      status: "succeeded",
      runtime_family: "unknown",
      completeness: "complete",
      seal: { outcome: "succeeded", reason_code: "ok" }
    })
    expect(keys(trace.seal)).toEqual(["completed_at", "outcome", "reason_code", "wall_clock_seconds"])
    expect(keys(trace.rollups)).toEqual(
      [
        "accounted_seconds",
        "active_execution_seconds",
        "external_wait_seconds",
        "lease_wait_seconds",
        "unaccounted_seconds",
        "wall_clock_seconds"
      ].sort()
    )
    const operations = trace.operations as ReadonlyArray<Record<string, unknown>>
    const optional = ["interaction", "outcome"]
    for (const op of operations) {
      const required = keys(op).filter((k) => !optional.includes(k))
      expect(required).toEqual(["duration_seconds", "kind", "sequence", "start_offset_seconds"])
    }
    const sequences = operations.map((op) => Number(op.sequence))
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b))
    expect(new Set(sequences).size).toBe(sequences.length)
    const kinds = operations.map((op) => String(op.kind))
    const phases = ["agent.queue_wait", "agent.runtime_start", "agent.execution", "agent.finalization"]
    for (const phase of phases) expect(kinds).toContain(phase)
    const at = phases.map((phase) => kinds.indexOf(phase))
    expect(at).toEqual([...at].sort((a, b) => a - b))
    // workspace-write holds the writer lease: its acquisition is a phase, and the only lease wait.
    expect(operations.find((op) => op.kind === "agent.lease_acquire")).toMatchObject({ outcome: "acquired" })
  })

  it("the human view shows the same trace: timeline, seal and every rollup value of the JSON", async () => {
    const trace = await cliJson("diagnostics", "task", finished)
    const human = ok(await cli("diagnostics", "task", finished)).stdout
    expect(human).toMatch(line("disposition", "available"))
    expect(human).toMatch(line("completeness", "complete"))
    for (const [key, value] of Object.entries(trace.rollups as Record<string, number>))
      expect(human).toMatch(line(`rollups.${key}`, value))
    for (const [key, value] of Object.entries(trace.seal as Record<string, unknown>))
      expect(human).toMatch(line(`seal.${key}`, value))
    for (const [i, op] of (trace.operations as ReadonlyArray<Record<string, unknown>>).entries())
      for (const [key, value] of Object.entries(op))
        expect(human).toMatch(line(`operations[${i}].${key}`, value))
  })

  it("a well-formed id never submitted: unknown_task, exit 0", async () => {
    const never = "agt_000000000000000000000000"
    expect(await cliJson("diagnostics", "task", never)).toEqual({
      catalog_version: 1,
      disposition: "unknown_task",
      task_id: never
    })
    const human = ok(await cli("diagnostics", "task", never)).stdout
    expect(human).toBe(`catalog_version: 1\ndisposition:     unknown_task\ntask_id:         ${never}\n`)
  })
})

describe("serverfs diagnostics snapshot", () => {
  it("catalog v1, the frozen limits and the counters; no task identity, human or --json", async () => {
    const snapshot = await cliJson("diagnostics", "snapshot")
    expect(keys(snapshot)).toEqual(
      [
        "active_tasks",
        "catalog_version",
        "counters",
        "durable_tasks_predate_generation",
        "generation_started_at",
        "limits",
        "retained_bytes",
        "retained_records",
        "retained_tasks",
        "terminal_tasks"
      ].sort()
    )
    expect(snapshot.catalog_version).toBe(1)
    expect(snapshot.limits).toEqual({
      max_records: DIAGNOSTIC_LIMITS.maxRecords,
      max_bytes: DIAGNOSTIC_LIMITS.maxBytes,
      max_task_records: DIAGNOSTIC_LIMITS.maxTaskRecords,
      max_task_bytes: DIAGNOSTIC_LIMITS.maxTaskBytes,
      max_operation_bytes: DIAGNOSTIC_LIMITS.maxOperationBytes,
      seal_reserved_bytes: DIAGNOSTIC_LIMITS.sealReservedBytes
    })
    expect(snapshot.counters).toEqual({
      record_failures: 0,
      admission_failures: 0,
      ordinary_records_dropped: 0,
      truncated_tasks: 0,
      oversized_rejections: 0,
      evictions: 0
    })
    expect(snapshot).toMatchObject({ terminal_tasks: 1, retained_tasks: 1, active_tasks: 0 })
    expect(snapshot.durable_tasks_predate_generation).toBe(false)

    // JSON ↔ human parity: every value of the (idle, so unchanging) snapshot on its dotted key.
    const human = ok(await cli("diagnostics", "snapshot")).stdout
    for (const [key, value] of Object.entries(snapshot)) {
      if (value !== null && typeof value === "object")
        for (const [inner, v] of Object.entries(value)) expect(human).toMatch(line(`${key}.${inner}`, v))
      else expect(human).toMatch(line(key, value))
    }
    expect(human).toMatch(line("limits.max_records", 2048))
    const raw = (await cli("diagnostics", "snapshot", "--json")).stdout
    expect(human).not.toMatch(TASK_ID)
    expect(raw).not.toMatch(TASK_ID)
  })
})

describe("serverfs metrics", () => {
  const METRIC_NAMES = [
    "serverfs_agent_lease_acquire_seconds",
    "serverfs_agent_queue_depth",
    "serverfs_agent_queue_wait_seconds",
    "serverfs_agent_recovery_total",
    "serverfs_agent_task_duration_seconds",
    "serverfs_agent_tasks_terminal_total",
    "serverfs_bridge_rpc_calls_total",
    "serverfs_bridge_rpc_duration_seconds"
  ]

  it("the succeeded task is counted; RPC labels come from the contract; human table, --json keys", async () => {
    const metrics = await cliJson("metrics")
    expect(keys(metrics)).toEqual(["series", "started_at"])
    const series = metrics.series as ReadonlyArray<Record<string, unknown>>
    for (const s of series) {
      expect(METRIC_NAMES).toContain(s.name)
      expect(keys(s)).toEqual(
        s.kind === "histogram"
          ? ["buckets", "kind", "labels", "name", "sum", "value"]
          : ["kind", "labels", "name", "value"]
      )
    }
    const labelled = (name: string) =>
      series.filter((s) => s.name === name).map((s) => s.labels as Record<string, string>)

    const terminal = series.find(
      (s) =>
        s.name === "serverfs_agent_tasks_terminal_total" &&
        JSON.stringify(s.labels) === JSON.stringify({ outcome: "succeeded", runtime_family: "unknown" })
    )
    expect(terminal?.value).toBeGreaterThanOrEqual(1)
    const calls = labelled("serverfs_bridge_rpc_calls_total")
    expect(calls.map((l) => l.method)).toContain("task.submit")
    const outcomes = ["ok", "fault", ...Object.keys(FROZEN_ERRORS)]
    for (const l of calls) {
      expect(keys(l)).toEqual(["method", "outcome"])
      expect(Object.keys(BRIDGE_METHODS)).toContain(l.method)
      expect(outcomes).toContain(l.outcome)
    }
    for (const l of labelled("serverfs_bridge_rpc_duration_seconds"))
      expect(Object.keys(BRIDGE_METHODS)).toContain(l.method)
    // One generation: the metrics and the recorder start together.
    expect(metrics.started_at).toBe((await cliJson("diagnostics", "snapshot")).generation_started_at)

    const human = ok(await cli("metrics")).stdout
    expect(human).toMatch(/^METRIC\s+KIND\s+LABELS\s+VALUE$/m)
    const counted = human.match(
      /^serverfs_agent_tasks_terminal_total\s+counter\s+outcome=succeeded,runtime_family=unknown\s+(\d+)$/m
    )
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(1)
    expect(human).toMatch(
      /^serverfs_agent_task_duration_seconds\s+histogram\s+outcome=succeeded,runtime_family=unknown\s+count=\d+ sum=\d+\.\d+ mean=\d+\.\d+$/m
    )
    expect(human).toMatch(/^serverfs_agent_queue_depth\s+gauge\s+-\s+\d+$/m)
  })
})

describe("privacy", () => {
  it("no prompt, result, path, model, correlation id or idempotency key in any observe output", async () => {
    // The sentinel did reach the bridge: the caller's own view echoes it back.
    const view = await stack.client.callTool({ name: "get_agent_task", arguments: { task_id: finished } })
    expect(JSON.stringify(view)).toContain(`${SENTINEL}-CORRELATION`)
    expect(JSON.stringify(view)).toContain(MODEL)
    const commands = [
      ["diagnostics", "snapshot"],
      ["diagnostics", "task", finished],
      ["metrics"],
      ["tasks", "list"],
      // tasks show prints TaskSummary, which leaves all five out (render/TaskSummary.ts)
      ["tasks", "show", finished]
    ].flatMap((args) => [args, [...args, "--json"]])
    for (const args of commands) {
      const run = ok(await cli(...args))
      expect(run.stdout).not.toContain(SENTINEL)
      expect(run.stdout).not.toContain(MODEL)
      expect(run.stdout).not.toContain(stack.tree.base)
    }
  })
})

describe("after a restart on the same state", () => {
  it("the finished task is not_retained (bridge_restarted); the snapshot and metrics start again", async () => {
    const before = await cliJson("metrics")
    await stack.bridge.restart()

    const gone = await cliJson("diagnostics", "task", finished)
    expect(gone).toEqual({
      catalog_version: 1,
      disposition: "not_retained",
      task_id: finished,
      reason: "bridge_restarted"
    })
    const human = ok(await cli("diagnostics", "task", finished)).stdout
    expect(human).toMatch(line("disposition", "not_retained"))
    expect(human).toMatch(line("reason", "bridge_restarted"))

    const snapshot = await cliJson("diagnostics", "snapshot")
    expect(snapshot).toMatchObject({ retained_tasks: 0, durable_tasks_predate_generation: true })
    const after = await cliJson("metrics")
    expect(after.started_at).not.toBe(before.started_at)
    const series = after.series as ReadonlyArray<Record<string, unknown>>
    expect(series.some((s) => s.name === "serverfs_agent_tasks_terminal_total")).toBe(false)
  })

  it("no bridge: metrics fails AGENT_BRIDGE_UNAVAILABLE with exit 3, as a line or the JSON error", async () => {
    await stack.bridge.kill("SIGTERM")
    const down = await cli("metrics")
    expect(down.code).toBe(3)
    expect(down.stdout).toBe("")
    expect(down.stderr).toBe("serverfs: AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable\n")
    const downJson = await cli("metrics", "--json")
    expect(downJson.code).toBe(3)
    expect(parseJsonObject(downJson.stdout)).toEqual({
      error: { code: "AGENT_BRIDGE_UNAVAILABLE", message: "Agent Bridge is unavailable" }
    })
  })
})
