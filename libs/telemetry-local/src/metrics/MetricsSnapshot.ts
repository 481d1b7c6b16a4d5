import type { MetricSeries, MetricsSnapshotResult } from "@serverfs/domain"
import { Effect, Metric, MetricState } from "effect"

/** Only the project's own metrics: Effect's runtime metrics (fiber counts…) are not the contract. */
const PREFIX = "serverfs_"

const numberOf = (value: number | bigint): number => (typeof value === "bigint" ? Number(value) : value)

const labelsOf = (tags: ReadonlyArray<{ readonly key: string; readonly value: string }>) =>
  Object.fromEntries(
    tags.map((t) => [t.key, t.value] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  )

const seriesOf = (
  name: string,
  tags: ReadonlyArray<{ readonly key: string; readonly value: string }>,
  state: MetricState.MetricState.Untyped
): MetricSeries | undefined => {
  const labels = labelsOf(tags)
  if (MetricState.isCounterState(state))
    return { name, kind: "counter", labels, value: numberOf(state.count) }
  if (MetricState.isGaugeState(state)) return { name, kind: "gauge", labels, value: numberOf(state.value) }
  if (MetricState.isHistogramState(state)) {
    return {
      name,
      kind: "histogram",
      labels,
      value: state.count,
      sum: state.sum,
      // cumulative; the +Inf bucket is `value` itself (and Infinity has no JSON form)
      buckets: state.buckets
        .filter(([bound]) => Number.isFinite(bound))
        .map(([bound, n]) => [bound, n] as const)
    }
  }
  return undefined
}

const keyOf = (s: MetricSeries): string => `${s.name}\u0000${JSON.stringify(s.labels)}`

/**
 * `metrics.snapshot`: the process-local metrics as they are now (they reset with the process;
 * `startedAt` says since when). Every label value comes from a closed vocabulary (AgentMetrics),
 * so the snapshot carries no caller text. Ordered by name then labels, so it is stable.
 */
export const metricsSnapshot = (startedAt: string): Effect.Effect<MetricsSnapshotResult> =>
  Effect.map(Metric.snapshot, (pairs) => ({
    started_at: startedAt,
    series: pairs
      .filter((pair) => pair.metricKey.name.startsWith(PREFIX))
      .flatMap((pair) => {
        const series = seriesOf(pair.metricKey.name, pair.metricKey.tags, pair.metricState)
        return series === undefined ? [] : [series]
      })
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))
  }))
