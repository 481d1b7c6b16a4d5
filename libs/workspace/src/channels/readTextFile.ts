import {
  BinaryFile,
  FileChangedDuringRead,
  LineTooLarge,
  NotAFile,
  type ReadError,
  ReadLimitExceeded,
  type ReadTextFileOutput,
  UnsupportedTextEncoding
} from "@serverfs/domain"
import type { ResolvedPath } from "@serverfs/policy"
import { fstat, O } from "@serverfs/posix"
import { Effect } from "effect"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { openParent } from "../DescriptorWalk.js"
import { toWalkError } from "../OsError.js"
import { openRegularFile } from "../RegularFile.js"
import { revisionOf } from "../Revision.js"
import { decodeUtf8, readPage } from "../TextPage.js"

export interface TextWindow {
  readonly startLine: number
  readonly maxLines: number
}

export interface TextPageRead {
  readonly resolved: ResolvedPath
  readonly content: string
  readonly bytes: number
  readonly lineCount: number
  readonly hasMore: boolean
  readonly revision: string
}

/**
 * One page of a text file through the descriptor walk (tool-contracts §2.5). The revision is
 * taken from the fd before reading and compared after: a file that changed under the read is
 * refused rather than returned with a revision it does not match. Shared by read_text_file
 * and the resource template.
 */
export const readTextPage = (
  context: ChannelContext,
  workdir: string,
  path: string,
  window: TextWindow
): Effect.Effect<TextPageRead, ReadError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const resolved = yield* resolve(context, workdir, path)
      const at = { workdir, path }
      if (resolved.components.length === 0) return yield* new NotAFile(at)
      const root = context.rootOf(resolved.workdir)
      const parent = yield* openParent(root, resolved.components, O.PATH, at)
      const file = yield* openRegularFile(parent.fd, parent.name, O.RDONLY, at)
      const revision = revisionOf(file.stat)
      const { maxReadScanBytes, readTimeoutSeconds } = context.settings
      // Bounded in bytes scanned and in time (issue 14): a large start_line on a huge or sparse
      // file ends with READ_LIMIT_EXCEEDED instead of holding the server. The deadline
      // interrupts between two chunk reads (waiting for the one in flight); the scope then closes
      // the fd.
      const page = yield* readPage(file.fd, file.stat.size, {
        startLine: window.startLine,
        maxLines: Math.min(window.maxLines, resolved.workdir.maxReadLines),
        maxBytes: resolved.workdir.maxReadBytes,
        maxScanBytes: maxReadScanBytes,
        timeoutSeconds: readTimeoutSeconds
      }).pipe(Effect.mapError((e) => toWalkError(e, at)))
      if (page._tag === "deadline") {
        return yield* new ReadLimitExceeded({ ...at, limit: "deadline", value: readTimeoutSeconds })
      }
      if (page._tag === "scan-limit") {
        return yield* new ReadLimitExceeded({ ...at, limit: "scan_bytes", value: maxReadScanBytes })
      }
      if (page._tag === "binary") return yield* new BinaryFile(at)
      if (page._tag === "line-too-large") {
        return yield* new LineTooLarge({ ...at, line: page.line, maxBytes: resolved.workdir.maxReadBytes })
      }
      const after = yield* Effect.try({ try: () => fstat(file.fd), catch: (e) => toWalkError(e, at) })
      if (revisionOf(after) !== revision) return yield* new FileChangedDuringRead(at)
      const content = decodeUtf8(page.bytes)
      if (content === undefined) return yield* new UnsupportedTextEncoding(at)
      return {
        resolved,
        content,
        bytes: page.bytes.length,
        lineCount: page.lineCount,
        hasMore: page.hasMore,
        revision
      }
    })
  )

export const readTextFile = (
  context: ChannelContext,
  input: {
    readonly workdir: string
    readonly path: string
    readonly start_line: number
    readonly max_lines: number
  }
): Effect.Effect<ReadTextFileOutput, ReadError> =>
  Effect.map(
    readTextPage(context, input.workdir, input.path, {
      startLine: input.start_line,
      maxLines: input.max_lines
    }),
    (page) => {
      const endLine = input.start_line + page.lineCount - 1
      return {
        workdir: input.workdir,
        path: input.path,
        start_line: input.start_line,
        end_line: endLine,
        content: page.content,
        bytes_returned: page.bytes,
        has_more: page.hasMore,
        next_start_line: page.hasMore ? endLine + 1 : null,
        revision: page.revision
      }
    }
  )
