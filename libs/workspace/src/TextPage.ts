import * as fs from "node:fs"
import { Duration, Effect } from "effect"

/**
 * The paging algorithm of read_text_file (tool-contracts §2.5), streaming over an fd so memory
 * stays bounded by one page whatever the file size:
 *
 * - a NUL in the first 1024 bytes → binary, whatever the start line;
 * - lines split on "\n" with terminators kept; lines before `startLine` are skipped unchecked;
 * - a UTF-8 BOM is removed from the physical first line only;
 * - a line in the window (including the one just after a full page) longer than `maxBytes` →
 *   line too large;
 * - the page ends (has_more) at `maxLines` lines, or when the next line would push it past
 *   `maxBytes`.
 *
 * Work is bounded too (issue 14): the file is read with asynchronous reads in chunks, so the
 * event loop serves other calls between two chunks however many lines are skipped, and no more
 * than `maxScanBytes` bytes are read to reach and return the page — a huge start_line on a
 * sparse 50 GB file ends with "scan-limit" instead of reading the hole, and past `timeoutSeconds`
 * with "deadline" (an interruption waits for the read in flight, so the fd is never closed under
 * it).
 */
export interface PageRequest {
  readonly startLine: number
  readonly maxLines: number
  readonly maxBytes: number
  readonly maxScanBytes: number
}

export type PageResult =
  | {
      readonly _tag: "page"
      /** May be a view into the buffer the file was read into: the reading has ended. */
      readonly bytes: Buffer
      readonly lineCount: number
      readonly hasMore: boolean
    }
  | { readonly _tag: "binary" }
  | { readonly _tag: "line-too-large"; readonly line: number }
  | { readonly _tag: "scan-limit" }

const BINARY_PROBE = 1024
/** Large enough that skipping costs few round trips to the thread pool, small enough to yield often. */
const CHUNK = 256 * 1024
const NL = 0x0a
const BOM = Buffer.from([0xef, 0xbb, 0xbf])
const EMPTY = Buffer.alloc(0)

/**
 * The page state machine: fed chunk by chunk, it returns a result as soon as one is known.
 * Pure CPU on the bytes it is given; all I/O is the caller's.
 *
 * The window's bytes (the page's lines, then the line being scanned) are contiguous in the
 * file, so the scanner keeps counts and offsets rather than a view per line (issue 12: those
 * views were a quarter of a read's garbage). Only what a chunk leaves unfinished is copied,
 * into `carried`, before the caller reuses the chunk's buffer.
 */
class PageScanner {
  private lineNo = 1
  /** Bytes of the line being scanned (not yet part of the page). */
  private currentLength = 0
  private lineCount = 0
  /** Bytes of the page's complete lines: a prefix of the window's bytes. */
  private pageBytes = 0
  /** The window's bytes from earlier chunks, one copy per chunk (see feed). */
  private readonly carried: Buffer[] = []
  private first = true

  constructor(private readonly request: PageRequest) {}

  /** The page: the first `pageBytes` of the carried bytes then of `rest` (this chunk's window). */
  private page(hasMore: boolean, rest: Buffer): PageResult {
    const bytes =
      this.carried.length === 0
        ? rest.subarray(0, this.pageBytes)
        : Buffer.concat([...this.carried, rest], this.pageBytes)
    return { _tag: "page", bytes, lineCount: this.lineCount, hasMore }
  }

  // Completes the current window line; returns false when the page is full (has_more).
  private complete(): boolean {
    if (
      this.lineCount >= this.request.maxLines ||
      this.pageBytes + this.currentLength > this.request.maxBytes
    )
      return false
    this.lineCount++
    this.pageBytes += this.currentLength
    this.currentLength = 0
    return true
  }

  /**
   * Consume one chunk. With `atEnd` the chunk ends the file, and a page ends with it; otherwise
   * the caller reuses the chunk's buffer afterwards, so the window's bytes in it are copied out.
   */
  feed(input: Buffer, atEnd: boolean): PageResult | undefined {
    const { startLine, maxBytes } = this.request
    let chunk = input
    if (this.first) {
      this.first = false
      if (chunk.subarray(0, BINARY_PROBE).includes(0)) return { _tag: "binary" }
      if (startLine === 1 && chunk.subarray(0, 3).equals(BOM)) chunk = chunk.subarray(3)
    }
    // Where the window's bytes begin in this chunk (its start, once the window has begun).
    let windowStart = this.lineNo < startLine ? chunk.length : 0
    let i = 0
    while (i < chunk.length) {
      const nl = chunk.indexOf(NL, i)
      if (this.lineNo < startLine) {
        // Skipping: only newlines matter.
        if (nl === -1) return atEnd ? this.finish() : undefined
        this.lineNo++
        i = nl + 1
        if (this.lineNo === startLine) windowStart = i
        continue
      }
      const end = nl === -1 ? chunk.length : nl + 1
      this.currentLength += end - i
      if (this.currentLength > maxBytes) return { _tag: "line-too-large", line: this.lineNo }
      if (nl !== -1) {
        if (!this.complete()) return this.page(true, chunk.subarray(windowStart))
        this.lineNo++
      }
      i = end
    }
    const window = chunk.subarray(windowStart)
    if (atEnd) return this.finish(window)
    // Each chunk's part is copied once, and joined once with the page: linear in the page.
    if (window.length > 0) this.carried.push(Buffer.from(window))
    return undefined
  }

  /** End of file: a last line without a final newline completes the page. */
  finish(rest: Buffer = EMPTY): PageResult {
    if (this.currentLength > 0 && !this.complete()) return this.page(true, rest)
    return this.page(false, rest)
  }
}

/**
 * One positional read on the thread pool. An interruption waits for the read in flight to
 * complete, so the caller's scope never closes the fd while the pool still uses it.
 */
const readAt = (fd: number, buffer: Buffer, offset: number, length: number, position: number) =>
  Effect.async<number, NodeJS.ErrnoException>((resume) => {
    let done: (() => void) | undefined
    let finished = false
    fs.read(fd, buffer, offset, length, position, (error, n) => {
      finished = true
      if (done !== undefined) return done()
      resume(error === null ? Effect.succeed(n) : Effect.fail(error))
    })
    return Effect.async<void>((resumeCancel) => {
      if (finished) return resumeCancel(Effect.void)
      done = () => resumeCancel(Effect.void)
    })
  })

/** Read until `length` bytes are in or EOF, on the thread pool (short reads are retried). */
export const readFully = (fd: number, buffer: Buffer, length: number, position: number) =>
  Effect.gen(function* () {
    let filled = 0
    while (filled < length) {
      const n = yield* readAt(fd, buffer, filled, length - filled, position + filled)
      if (n === 0) break
      filled += n
    }
    return filled
  })

/** The same, blocking: used for the first chunk only. */
const readFullySync = (fd: number, buffer: Buffer, length: number): number => {
  let filled = 0
  while (filled < length) {
    const n = fs.readSync(fd, buffer, filled, length - filled, filled)
    if (n === 0) break
    filled += n
  }
  return filled
}

/**
 * The first chunk of a page is read synchronously: one bounded pread, cheaper than a thread pool
 * round trip, so a file that fits in it (most files) is paged exactly as before, with no
 * scheduling in between. Every further chunk goes through the thread pool, under the deadline.
 *
 * `beginPage` is that first step as plain code (issue 12: read_text_file runs it without any
 * fiber step): the page when the first chunk decided it, the failed read, or `rest`, the effect
 * that reads on.
 */
export type PageStart =
  | { readonly _tag: "done"; readonly result: PageResult }
  | { readonly _tag: "failed"; readonly error: NodeJS.ErrnoException }
  | {
      readonly _tag: "more"
      readonly rest: Effect.Effect<PageResult | { readonly _tag: "deadline" }, NodeJS.ErrnoException>
    }

export const beginPage = (
  fd: number,
  sizeHint: number,
  request: PageRequest & { readonly timeoutSeconds: number }
): PageStart => {
  const scanner = new PageScanner(request)
  const buffer = Buffer.allocUnsafe(Math.max(BINARY_PROBE, Math.min(CHUNK, sizeHint + 1)))
  let position = 0
  /**
   * Feed `n` bytes just read at `position` out of `requested`: a result, or undefined to read
   * on. A short read means end of file (the reads retry until full or EOF), which saves the
   * extra read that would only return 0.
   */
  const consume = (n: number, requested: number): PageResult | undefined => {
    if (n === 0) return scanner.finish()
    if (position + n > request.maxScanBytes) {
      // The bound is reached: the bytes up to it may still complete the page.
      return (
        scanner.feed(buffer.subarray(0, request.maxScanBytes - position), false) ?? { _tag: "scan-limit" }
      )
    }
    position += n
    return scanner.feed(buffer.subarray(0, n), n < requested)
  }
  // One byte past the bound is read, so a file of exactly maxScanBytes still completes.
  const nextLength = () => Math.min(buffer.length, request.maxScanBytes + 1 - position)
  let first: PageResult | undefined
  try {
    const length = nextLength()
    first = consume(readFullySync(fd, buffer, length), length)
  } catch (error) {
    return { _tag: "failed", error: error as NodeJS.ErrnoException }
  }
  if (first !== undefined) return { _tag: "done", result: first }
  const rest = Effect.gen(function* () {
    for (;;) {
      const length = nextLength()
      const result = consume(yield* readFully(fd, buffer, length, position), length)
      if (result !== undefined) return result
    }
  }).pipe(
    Effect.timeoutTo({
      duration: Duration.seconds(request.timeoutSeconds),
      onSuccess: (result): PageResult | { readonly _tag: "deadline" } => result,
      onTimeout: () => ({ _tag: "deadline" }) as const
    })
  )
  return { _tag: "more", rest }
}

/** The page as one effect (fails with the errno error of a failed read). */
export const readPage = (
  fd: number,
  sizeHint: number,
  request: PageRequest & { readonly timeoutSeconds: number }
): Effect.Effect<PageResult | { readonly _tag: "deadline" }, NodeJS.ErrnoException> =>
  Effect.suspend(() => {
    const start = beginPage(fd, sizeHint, request)
    switch (start._tag) {
      case "done":
        return Effect.succeed(start.result)
      case "failed":
        return Effect.fail(start.error)
      case "more":
        return start.rest
    }
  })

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Strict UTF-8 decoding: undefined when the bytes are not valid UTF-8. BOMs are kept as data. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}
