import type { Summary } from "./Stats.js"

/** One comparison of the report: ServerFS against one or more baselines. */
export interface Baseline {
  readonly label: string
  readonly summary: Summary
}

/** ServerFS p50 / baseline p50 must be at most `maxRatio`. */
export interface Target {
  readonly against: string
  readonly maxRatio: number
}

export interface Row {
  readonly operation: string
  readonly unit: "ms" | "MiB"
  readonly serverfs: Summary
  readonly baselines: ReadonlyArray<Baseline>
  readonly target?: Target
}

export interface Line {
  readonly operation: string
  readonly serverfs: string
  readonly baseline: string
  readonly baselineFigures: string
  readonly ratio: string
  readonly target: string
  readonly result: "PASS" | "MISS" | ""
}

const number = (value: number): string => {
  if (!Number.isFinite(value)) return "n/a"
  if (value < 0.1) return value.toFixed(3)
  if (value < 10) return value.toFixed(2)
  return value.toFixed(1)
}

const figures = (summary: Summary, unit: Row["unit"]): string =>
  summary.n === 1
    ? `${number(summary.p50)} ${unit}`
    : `${number(summary.p50)} / ${number(summary.p99)} ${unit}`

export const ratioOf = (row: Row, label: string): number => {
  const baseline = row.baselines.find((b) => b.label === label)
  if (baseline === undefined) throw new Error(`${row.operation}: no baseline ${label}`)
  return row.serverfs.p50 / baseline.summary.p50
}

export const verdictOf = (row: Row): "PASS" | "MISS" | undefined =>
  row.target === undefined
    ? undefined
    : ratioOf(row, row.target.against) <= row.target.maxRatio
      ? "PASS"
      : "MISS"

/** One printed line per baseline; the target and verdict sit on the baseline they concern. */
export const linesOf = (rows: ReadonlyArray<Row>): Line[] =>
  rows.flatMap((row) =>
    row.baselines.map((baseline, i): Line => {
      const targeted = row.target?.against === baseline.label
      return {
        operation: i === 0 ? row.operation : "",
        serverfs: i === 0 ? figures(row.serverfs, row.unit) : "",
        baseline: baseline.label,
        baselineFigures: figures(baseline.summary, row.unit),
        ratio: `${(row.serverfs.p50 / baseline.summary.p50).toFixed(2)}×`,
        target: targeted ? `≤ ${row.target!.maxRatio}×` : "",
        result: targeted ? verdictOf(row)! : ""
      }
    })
  )

const HEADERS = [
  "Operation",
  "ServerFS p50 / p99",
  "Baseline",
  "Baseline p50 / p99",
  "Ratio (p50)",
  "Target",
  "Result"
] as const

const cells = (line: Line): string[] => [
  line.operation,
  line.serverfs,
  line.baseline,
  line.baselineFigures,
  line.ratio,
  line.target,
  line.result
]

/** A fixed-width table for the terminal. */
export const renderText = (rows: ReadonlyArray<Row>): string => {
  const table = [[...HEADERS], ...linesOf(rows).map(cells)]
  const widths = HEADERS.map((_, c) => Math.max(...table.map((r) => [...r[c]!].length)))
  const render = (r: ReadonlyArray<string>) =>
    r.map((cell, c) => cell + " ".repeat(widths[c]! - [...cell].length)).join("  ")
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  return [render(table[0]!), rule, ...table.slice(1).map(render)].join("\n")
}

const escapeMarkdown = (cell: string): string => cell.replace(/[\\|*_]/g, (c) => `\\${c}`)

/** The same table in Markdown, for docs/performance.md. */
export const renderMarkdown = (rows: ReadonlyArray<Row>): string => {
  const row = (r: ReadonlyArray<string>) => `| ${r.map(escapeMarkdown).join(" | ")} |`
  return [
    row([...HEADERS]),
    row(HEADERS.map(() => "---")),
    ...linesOf(rows).map((l) => row(cells(l)).replace(/\| (PASS|MISS) \|$/, "| **$1** |"))
  ].join("\n")
}
