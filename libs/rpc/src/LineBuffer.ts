/**
 * NDJSON framing (bridge-internals §1.4): splits a byte stream into "\n"-terminated lines and
 * enforces the frame limit on the bytes themselves, before anything is decoded or parsed.
 *
 * A line may not exceed `maxLineBytes` bytes, not counting its "\n". The limit also applies to
 * a line still being received: once more than `maxLineBytes` bytes have arrived without a
 * newline the buffer reports `TooLarge` instead of waiting (and buffering) any further, so a
 * peer can never make the other side hold more than one frame plus one chunk in memory.
 */
export type Frame = { readonly _tag: "Line"; readonly bytes: Uint8Array } | { readonly _tag: "TooLarge" }

const NEWLINE = 0x0a
const TOO_LARGE: Frame = { _tag: "TooLarge" }

export class LineBuffer {
  /** Chunks not yet searched for a newline. */
  private readonly unscanned: Array<Uint8Array> = []
  /** Chunks of the line being assembled; none of them contains a newline. */
  private partial: Array<Uint8Array> = []
  private partialBytes = 0
  private overflowed = false

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Uint8Array): void {
    if (!this.overflowed && chunk.length > 0) this.unscanned.push(chunk)
  }

  /**
   * The next complete line (without its "\n"), `TooLarge` once the current line is over the
   * limit (and from then on: the stream is no longer in sync), or undefined when more bytes are
   * needed.
   */
  take(): Frame | undefined {
    if (this.overflowed) return TOO_LARGE
    for (;;) {
      const chunk = this.unscanned[0]
      if (chunk === undefined) return undefined
      const newline = chunk.indexOf(NEWLINE)
      if (newline === -1) {
        this.unscanned.shift()
        this.partial.push(chunk)
        this.partialBytes += chunk.length
        if (this.partialBytes > this.maxLineBytes) return this.overflow()
        continue
      }
      const lineBytes = this.partialBytes + newline
      if (lineBytes > this.maxLineBytes) return this.overflow()
      const head = chunk.subarray(0, newline)
      const bytes = this.partial.length === 0 ? head : Buffer.concat([...this.partial, head], lineBytes)
      this.partial = []
      this.partialBytes = 0
      if (newline + 1 < chunk.length) this.unscanned[0] = chunk.subarray(newline + 1)
      else this.unscanned.shift()
      return { _tag: "Line", bytes }
    }
  }

  private overflow(): Frame {
    this.overflowed = true
    this.partial = []
    this.partialBytes = 0
    this.unscanned.length = 0
    return TOO_LARGE
  }
}
