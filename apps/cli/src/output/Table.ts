/**
 * Aligned plain-text tables for the human output. Cells are padded by their display width in
 * code points (no East-Asian width tables: aliases and codes are ASCII, ids are hex); the last
 * column is not padded, so no line ends in spaces. A cell's control characters are shown as
 * `?` — a task's text never moves the operator's cursor.
 */
export interface Column<Row> {
  readonly header: string
  readonly cell: (row: Row) => string
  /** Right-align (numbers). */
  readonly right?: boolean
}

const isControl = (c: string): boolean => {
  const code = c.codePointAt(0) ?? 0
  return code < 0x20 || (code >= 0x7f && code <= 0x9f)
}

export const printable = (text: string): string =>
  Array.from(text, (c) => (isControl(c) ? "?" : c)).join("")

const width = (text: string): number => [...text].length

export const renderTable = <Row>(rows: ReadonlyArray<Row>, columns: ReadonlyArray<Column<Row>>): string => {
  const cells = rows.map((row) => columns.map((c) => printable(c.cell(row))))
  const widths = columns.map((c, i) => Math.max(width(c.header), ...cells.map((r) => width(r[i] ?? ""))))
  const line = (values: ReadonlyArray<string>) =>
    values
      .map((v, i) => {
        if (i === values.length - 1 && columns[i]?.right !== true) return v
        const pad = " ".repeat((widths[i] ?? 0) - width(v))
        return columns[i]?.right === true ? pad + v : v + pad
      })
      .join("  ")
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join("\n")
}

/** `key: value` lines, keys aligned. */
export const renderFields = (fields: ReadonlyArray<readonly [string, string]>): string => {
  const keyWidth = Math.max(0, ...fields.map(([k]) => width(k)))
  return fields.map(([k, v]) => `${k}:${" ".repeat(keyWidth - width(k) + 1)}${printable(v)}`).join("\n")
}
