/** Latency samples in milliseconds, reduced to the figures the report prints. */
export interface Summary {
  readonly n: number
  readonly p50: number
  /** Reported in notes where a budget is set at the 95th percentile (spec v0.22 §11). */
  readonly p95: number
  readonly p99: number
  readonly mean: number
  readonly min: number
  readonly max: number
}

/** Nearest-rank percentile of an ascending array (q in [0, 1]). */
export const percentile = (sorted: ReadonlyArray<number>, q: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)))
  return sorted[rank - 1]!
}

export const summarize = (samples: ReadonlyArray<number>): Summary => {
  const sorted = [...samples].sort((a, b) => a - b)
  const total = sorted.reduce((sum, x) => sum + x, 0)
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN
  }
}

/** A summary of one value (RSS, for instance), so single figures fit the same table. */
export const single = (value: number): Summary => summarize([value])
