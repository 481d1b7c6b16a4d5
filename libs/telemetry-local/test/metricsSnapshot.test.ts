/**
 * `metrics.snapshot`: the project's Effect metrics as JSON — only `serverfs_` series, counters and
 * gauges by value, histograms with count, sum and cumulative finite buckets; labels from the
 * closed vocabularies only.
 */
import { describe, expect, it } from "@effect/vitest"
import { MetricsSnapshotResult } from "@serverfs/domain"
import { AgentMetrics, metricsSnapshot } from "@serverfs/telemetry-local"
import { Effect, Metric, Schema } from "effect"

describe("metricsSnapshot", () => {
  it.effect("counters, gauges and histograms of serverfs_ metrics, stable order, JSON-safe", () =>
    Effect.gen(function* () {
      yield* AgentMetrics.taskTerminal("succeeded", "codex", 0.5)
      yield* AgentMetrics.taskTerminal("succeeded", "codex", 2)
      yield* AgentMetrics.queued
      yield* AgentMetrics.queued
      yield* AgentMetrics.dequeued("codex", 0.002)
      yield* AgentMetrics.leaseAcquire("busy", 0.0001)
      yield* AgentMetrics.rpcCall("task.submit", "ok", 0.003)
      yield* Metric.increment(Metric.counter("not_ours_total"))
      const snapshot = yield* metricsSnapshot("2026-12-01T00:00:00.000Z")
      // a JSON round trip through the contract's schema: no Infinity, no bigint, no extra key
      const decoded = yield* Schema.decodeUnknown(Schema.parseJson(MetricsSnapshotResult))(
        JSON.stringify(snapshot),
        {
          onExcessProperty: "error"
        }
      )
      expect(decoded).toEqual(snapshot)
      expect(snapshot.series.every((s) => s.name.startsWith("serverfs_"))).toBe(true)
      const find = (name: string, labels: Record<string, string>) =>
        snapshot.series.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))
      expect(
        find("serverfs_agent_tasks_terminal_total", { outcome: "succeeded", runtime_family: "codex" })
      ).toMatchObject({
        kind: "counter",
        value: 2
      })
      expect(find("serverfs_agent_queue_depth", {})).toMatchObject({ kind: "gauge", value: 1 })
      const duration = find("serverfs_agent_task_duration_seconds", {
        outcome: "succeeded",
        runtime_family: "codex"
      })
      expect(duration).toMatchObject({ kind: "histogram", value: 2, sum: 2.5 })
      const buckets = duration?.buckets ?? []
      expect(buckets.length).toBeGreaterThan(0)
      expect(buckets.every(([bound]) => Number.isFinite(bound))).toBe(true)
      // cumulative: non-decreasing, ending at most at the count
      expect(buckets.map(([, n]) => n)).toEqual([...buckets.map(([, n]) => n)].sort((a, b) => a - b))
      expect(buckets.find(([bound]) => bound >= 0.5 && bound < 2)?.[1]).toBe(1)
      expect(find("serverfs_agent_lease_acquire_seconds", { outcome: "busy" })).toMatchObject({ value: 1 })
      expect(find("serverfs_bridge_rpc_calls_total", { method: "task.submit", outcome: "ok" })).toMatchObject(
        {
          value: 1
        }
      )
      const keys = snapshot.series.map((s) => `${s.name} ${JSON.stringify(s.labels)}`)
      expect(keys).toEqual([...keys].sort())
    })
  )
})
