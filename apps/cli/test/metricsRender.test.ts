/**
 * `serverfs metrics`' human rendering (render/MetricsRender.ts): one aligned row per series in
 * the bridge's order; labels as one `k=v,…` token (`-` for none); a histogram's count, sum and
 * mean (no mean without observations); fractions without exponent notation; control
 * characters never reach the terminal.
 */
import { describe, expect, it } from "vitest"
import { PLAIN } from "../src/output/Style.js"
import { formatNumber, renderMetrics } from "../src/render/MetricsRender.js"

describe("renderMetrics", () => {
  it("counters, gauges and histograms as aligned rows", () => {
    const text = renderMetrics(PLAIN, {
      started_at: "2026-12-01T22:00:00.000Z",
      series: [
        { name: "serverfs_agent_queue_depth", kind: "gauge", labels: {}, value: 0 },
        {
          name: "serverfs_agent_task_duration_seconds",
          kind: "histogram",
          labels: { outcome: "succeeded", runtime_family: "unknown" },
          value: 2,
          sum: 0.5,
          buckets: [[0.01, 0]]
        },
        {
          name: "serverfs_agent_lease_acquire_seconds",
          kind: "histogram",
          labels: { outcome: "busy" },
          value: 0,
          sum: 0,
          buckets: []
        },
        {
          name: "serverfs_bridge_rpc_calls_total",
          kind: "counter",
          labels: { method: "task.\u001b[31mget", outcome: "ok" },
          value: 7
        }
      ]
    })
    expect(text.split("\n")).toEqual([
      "since 2026-12-01T22:00:00.000Z (the bridge's metrics reset when it restarts)",
      "METRIC                                KIND       LABELS                                    VALUE",
      "serverfs_agent_queue_depth            gauge      -                                         0",
      "serverfs_agent_task_duration_seconds  histogram  outcome=succeeded,runtime_family=unknown  count=2 sum=0.500000 mean=0.250000",
      "serverfs_agent_lease_acquire_seconds  histogram  outcome=busy                              count=0 sum=0 mean=-",
      "serverfs_bridge_rpc_calls_total       counter    method=task.?[31mget,outcome=ok           7"
    ])
  })

  it("no series yet", () => {
    expect(renderMetrics(PLAIN, { started_at: "2026-12-01T22:00:00.000Z", series: [] })).toBe(
      "since 2026-12-01T22:00:00.000Z (the bridge's metrics reset when it restarts)\nno metrics recorded yet"
    )
  })

  it("numbers: integers as is, fractions to the microsecond", () => {
    expect(formatNumber(12)).toBe("12")
    expect(formatNumber(0.0000001)).toBe("0.000000")
    expect(formatNumber(1.23456789)).toBe("1.234568")
  })
})
