import type { Summary } from "./Stats.js"

/** One comparison of the report: ServerFS against one or more baselines. */
export interface Baseline {
  readonly label: string
  readonly summary: Summary
}

/**
 * ServerFS / baseline must be at most `maxRatio`, on the p50 (the default) or the p99 of both.
 * `goal` is a stricter ratio aimed at (issue 12 names both): shown beside the target, reported
 * in its own summary line, never part of PASS/MISS.
 */
export interface Target {
  readonly against: string
  readonly maxRatio: number
  readonly stat?: "p50" | "p99"
  readonly goal?: number
}

/** An absolute target on ServerFS's own figure: at most or at least a value, in the row's unit. */
export interface Limit {
  readonly stat: "p50" | "p99"
  readonly atMost?: number
  readonly atLeast?: number
}

export type Unit = "ms" | "MiB" | "events/s"

export interface Row {
  readonly operation: string
  readonly unit: Unit
  readonly serverfs: Summary
  readonly baselines: ReadonlyArray<Baseline>
  readonly target?: Target
  readonly limits?: ReadonlyArray<Limit>
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

/** One target of one row, judged. */
export interface Check {
  readonly row: Row
  readonly description: string
  readonly pass: boolean
}

const number = (value: number, unit: Unit): string => {
  if (!Number.isFinite(value)) return "n/a"
  if (unit === "events/s" && value >= 1000) return value.toFixed(0)
  if (value < 0.1) return value.toFixed(3)
  if (value < 10) return value.toFixed(2)
  return value.toFixed(1)
}

const figures = (summary: Summary, unit: Unit): string =>
  summary.n === 1
    ? `${number(summary.p50, unit)} ${unit}`
    : `${number(summary.p50, unit)} / ${number(summary.p99, unit)} ${unit}`

const baselineOf = (row: Row, label: string): Baseline => {
  const baseline = row.baselines.find((b) => b.label === label)
  if (baseline === undefined) throw new Error(`${row.operation}: no baseline ${label}`)
  return baseline
}

export const ratioOf = (row: Row, label: string, stat: "p50" | "p99" = "p50"): number =>
  row.serverfs[stat] / baselineOf(row, label).summary[stat]

const targetText = (target: Target): string =>
  `${target.stat === "p99" ? "p99 " : ""}≤ ${target.maxRatio}×${target.goal === undefined ? "" : ` (goal ≤ ${target.goal}×)`}`

const limitText = (limit: Limit, row: Row): string => {
  const stat = row.serverfs.n === 1 ? "" : `${limit.stat} `
  const bound = limit.atMost !== undefined ? `< ${limit.atMost}` : `≥ ${limit.atLeast}`
  return `${stat}${bound} ${row.unit}`
}

const limitPasses = (limit: Limit, row: Row): boolean => {
  const value = row.serverfs[limit.stat]
  return (
    (limit.atMost === undefined || value < limit.atMost) &&
    (limit.atLeast === undefined || value >= limit.atLeast)
  )
}

const ratioPasses = (row: Row, target: Target): boolean =>
  ratioOf(row, target.against, target.stat) <= target.maxRatio

/** Every target of a row (the ratio target first, then the absolute ones), judged. */
export const checksOf = (row: Row): Check[] => [
  ...(row.target === undefined
    ? []
    : [
        {
          row,
          description: `${row.operation} (target ${targetText(row.target)} ${row.target.against})`,
          pass: ratioPasses(row, row.target)
        }
      ]),
  ...(row.limits ?? []).map((limit) => ({
    row,
    description: `${row.operation} (target ${limitText(limit, row)})`,
    pass: limitPasses(limit, row)
  }))
]

/** The goal of a row's ratio target, judged (none without one). */
export const goalOf = (row: Row): Check | undefined =>
  row.target?.goal === undefined
    ? undefined
    : {
        row,
        description: `${row.operation} (goal ≤ ${row.target.goal}× ${row.target.against})`,
        pass: ratioOf(row, row.target.against, row.target.stat) <= row.target.goal
      }

/** PASS when every target of the row is met, MISS when one is not, undefined without targets. */
export const verdictOf = (row: Row): "PASS" | "MISS" | undefined => {
  const checks = checksOf(row)
  if (checks.length === 0) return undefined
  return checks.every((c) => c.pass) ? "PASS" : "MISS"
}

const verdict = (pass: boolean): "PASS" | "MISS" => (pass ? "PASS" : "MISS")

/**
 * One printed line per baseline, then one per absolute target; a ratio target and its verdict
 * sit on the baseline they concern. A row with neither still gets one line.
 */
export const linesOf = (rows: ReadonlyArray<Row>): Line[] =>
  rows.flatMap((row) => {
    const p99Ratios = row.target?.stat === "p99"
    const baselineLines = row.baselines.map((baseline): Omit<Line, "operation" | "serverfs"> => {
      const targeted = row.target?.against === baseline.label
      const p50 = `${(row.serverfs.p50 / baseline.summary.p50).toFixed(2)}×`
      const p99 = `${(row.serverfs.p99 / baseline.summary.p99).toFixed(2)}×`
      return {
        baseline: baseline.label,
        baselineFigures: figures(baseline.summary, row.unit),
        ratio: p99Ratios ? `${p50} (p99 ${p99})` : p50,
        target: targeted ? targetText(row.target!) : "",
        result: targeted ? verdict(ratioPasses(row, row.target!)) : ""
      }
    })
    const limitLines = (row.limits ?? []).map(
      (limit): Omit<Line, "operation" | "serverfs"> => ({
        baseline: "(absolute target)",
        baselineFigures: "",
        ratio: "",
        target: limitText(limit, row),
        result: verdict(limitPasses(limit, row))
      })
    )
    const all = [...baselineLines, ...limitLines]
    const lines =
      all.length === 0 ? [{ baseline: "", baselineFigures: "", ratio: "", target: "", result: "" }] : all
    return lines.map(
      (line, i): Line => ({
        operation: i === 0 ? row.operation : "",
        serverfs: i === 0 ? figures(row.serverfs, row.unit) : "",
        ...line,
        result: line.result as Line["result"]
      })
    )
  })

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

const fixedWidth = (headers: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>): string => {
  const table = [[...headers], ...body]
  const widths = headers.map((_, c) => Math.max(...table.map((r) => [...r[c]!].length)))
  const render = (r: ReadonlyArray<string>) =>
    r
      .map((cell, c) => cell + " ".repeat(widths[c]! - [...cell].length))
      .join("  ")
      .trimEnd()
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  return [render(table[0]!), rule, ...table.slice(1).map(render)].join("\n")
}

/** A fixed-width table for the terminal. */
export const renderText = (rows: ReadonlyArray<Row>): string => fixedWidth(HEADERS, linesOf(rows).map(cells))

const escapeMarkdown = (cell: string): string => cell.replace(/[\\|*_]/g, (c) => `\\${c}`)

const markdownTable = (
  headers: ReadonlyArray<string>,
  body: ReadonlyArray<ReadonlyArray<string>>
): string => {
  const row = (r: ReadonlyArray<string>) => `| ${r.map(escapeMarkdown).join(" | ")} |`
  return [
    row(headers),
    row(headers.map(() => "---")),
    ...body.map((r) => row(r).replace(/\| (PASS|MISS) \|$/, "| **$1** |"))
  ].join("\n")
}

/** The same table in Markdown, for docs/performance.md. */
export const renderMarkdown = (rows: ReadonlyArray<Row>): string =>
  markdownTable([...HEADERS], linesOf(rows).map(cells))

/** A plain measurement with no ServerFS side (the fsync costs): label and p50 / p99. */
export interface Measurement {
  readonly label: string
  readonly unit: Unit
  readonly summary: Summary
}

const MEASUREMENT_HEADERS = ["Measurement", "p50 / p99", "n"] as const

const measurementCells = (m: Measurement): string[] => [
  m.label,
  figures(m.summary, m.unit),
  String(m.summary.n)
]

export const renderMeasurementsText = (measurements: ReadonlyArray<Measurement>): string =>
  fixedWidth(MEASUREMENT_HEADERS, measurements.map(measurementCells))

export const renderMeasurementsMarkdown = (measurements: ReadonlyArray<Measurement>): string =>
  markdownTable([...MEASUREMENT_HEADERS], measurements.map(measurementCells))
