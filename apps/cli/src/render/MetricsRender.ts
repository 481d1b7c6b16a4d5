import type { MetricSeries, MetricsSnapshotResult } from "@serverfs/domain"
import type { StyleService } from "../output/Style.js"
import { renderTable } from "../output/Table.js"

/**
 * Human rendering of `serverfs metrics`: one row per series of the bridge's `metrics.snapshot`,
 * in the bridge's order (name, then labels). A counter or gauge shows its value; a histogram its
 * observation count, sum and mean (the buckets stay in `--json`: a row per bucket would bury the
 * table). Labels are shown as `k=v` pairs joined by commas — one token, easy to grep.
 */
const labelsCell = (labels: MetricSeries["labels"]): string => {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}=${v}`)
  return pairs.length === 0 ? "-" : pairs.join(",")
}

/** Integers as they are; fractions (seconds) to the microsecond, without exponent notation. */
export const formatNumber = (value: number): string =>
  Number.isInteger(value) ? String(value) : value.toFixed(6)

const valueCell = (series: MetricSeries): string => {
  if (series.kind !== "histogram") return formatNumber(series.value)
  const sum = series.sum ?? 0
  const mean = series.value === 0 ? "-" : formatNumber(sum / series.value)
  return `count=${series.value} sum=${formatNumber(sum)} mean=${mean}`
}

export const renderMetrics = (style: StyleService, result: MetricsSnapshotResult): string => {
  const since = style.dim(`since ${result.started_at} (the bridge's metrics reset when it restarts)`)
  if (result.series.length === 0) return `${since}\nno metrics recorded yet`
  const table = renderTable(result.series, [
    { header: "METRIC", cell: (s) => s.name },
    { header: "KIND", cell: (s) => s.kind },
    { header: "LABELS", cell: (s) => labelsCell(s.labels) },
    { header: "VALUE", cell: valueCell }
  ])
  return `${since}\n${table}`
}
