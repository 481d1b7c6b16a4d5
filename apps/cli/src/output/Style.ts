import { Context, Layer } from "effect"

/**
 * Colour for the human output: on only when stdout is a terminal and NO_COLOR is unset
 * (no-color.org); `--json` output is never coloured. A Tag, so tests choose.
 */
export interface StyleService {
  readonly ok: (text: string) => string
  readonly warn: (text: string) => string
  readonly fail: (text: string) => string
  readonly dim: (text: string) => string
}

const paint = (code: number) => (text: string) => `\u001b[${code}m${text}\u001b[0m`
const plain = (text: string) => text

export const PLAIN: StyleService = { ok: plain, warn: plain, fail: plain, dim: plain }
export const COLOURED: StyleService = { ok: paint(32), warn: paint(33), fail: paint(31), dim: paint(2) }

export class Style extends Context.Tag("@serverfs/cli/Style")<Style, StyleService>() {
  static readonly plain = Layer.succeed(Style, PLAIN)
  /** From the process: colours on a TTY without NO_COLOR. */
  static readonly fromProcess = Layer.sync(Style, () =>
    process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === "" ? COLOURED : PLAIN
  )
}
