import {
  BinaryFile,
  FileChangedDuringRead,
  LineTooLarge,
  NotAFile,
  type ReadError,
  ReadLimitExceeded,
  type ReadTextFileOutput,
  UnsupportedTextEncoding,
  type WalkError
} from "@serverfs/domain"
import type { ResolvedPath } from "@serverfs/policy"
import { close, fstat, O, type Stat } from "@serverfs/posix"
import { Effect, Either } from "effect"
import { type ChannelContext, resolveNow } from "../ChannelContext.js"
import { openDirectorySync, walkErrorOf } from "../DescriptorWalk.js"
import { type At, toWalkError } from "../OsError.js"
import { type OpenedFile, openRegularFileSync } from "../RegularFile.js"
import { revisionOf, sameRevision } from "../Revision.js"
import { beginPage, decodeUtf8, type PageResult } from "../TextPage.js"

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

type Page = PageResult | { readonly _tag: "deadline" }

/** The page's outcome: its codes, the revision check and strict UTF-8 (tool-contracts §2.5). */
const finishPage = (
  page: Page,
  file: OpenedFile,
  resolved: ResolvedPath,
  revision: string,
  maxScanBytes: number,
  readTimeoutSeconds: number,
  at: At
): Either.Either<TextPageRead, ReadError> => {
  if (page._tag === "deadline") {
    return Either.left(new ReadLimitExceeded({ ...at, limit: "deadline", value: readTimeoutSeconds }))
  }
  if (page._tag === "scan-limit") {
    return Either.left(new ReadLimitExceeded({ ...at, limit: "scan_bytes", value: maxScanBytes }))
  }
  if (page._tag === "binary") return Either.left(new BinaryFile(at))
  if (page._tag === "line-too-large") {
    return Either.left(new LineTooLarge({ ...at, line: page.line, maxBytes: resolved.workdir.maxReadBytes }))
  }
  let after: Stat
  try {
    after = fstat(file.fd)
  } catch (error) {
    return Either.left(toWalkError(error, at))
  }
  if (!sameRevision(after, file.stat)) return Either.left(new FileChangedDuringRead(at))
  const content = decodeUtf8(page.bytes)
  if (content === undefined) return Either.left(new UnsupportedTextEncoding(at))
  return Either.right({
    resolved,
    content,
    bytes: page.bytes.length,
    lineCount: page.lineCount,
    hasMore: page.hasMore,
    revision
  })
}

/**
 * One page of a text file through the descriptor walk (tool-contracts §2.5). The revision is
 * taken from the fd before reading and compared after: a file that changed under the read is
 * refused rather than returned with a revision it does not match. Shared by read_text_file
 * and the resource template.
 *
 * A page found in the first chunk (most reads) is plain synchronous code in one Effect.suspend
 * (issue 12). The parent fd is closed as soon as the file is open; the file's fd is closed before
 * this returns, or when the further reads end (an interruption included).
 */
export const readTextPage = (
  context: ChannelContext,
  workdir: string,
  path: string,
  window: TextWindow
): Effect.Effect<TextPageRead, ReadError> =>
  // Uninterruptible until the fd's release is in place (as acquireRelease's acquire is); the
  // further reads themselves stay interruptible (the deadline).
  Effect.uninterruptibleMask((restore) =>
    Effect.suspend((): Effect.Effect<TextPageRead, ReadError> => {
      const resolvedOrError = resolveNow(context, workdir, path)
      if (Either.isLeft(resolvedOrError)) return Either.left(resolvedOrError.left)
      const resolved = resolvedOrError.right
      const at = { workdir, path }
      const { components } = resolved
      if (components.length === 0) return Either.left(new NotAFile(at))
      const root = context.rootOf(resolved.workdir)
      let parent: number
      try {
        parent = openDirectorySync(root, components.slice(0, -1), O.PATH, at)
      } catch (error) {
        return Either.left(walkErrorOf(error, at))
      }
      let opened: OpenedFile | WalkError
      try {
        opened = openRegularFileSync(parent, components[components.length - 1]!, O.RDONLY, at)
      } finally {
        close(parent)
      }
      if (!("fd" in opened)) return Either.left(opened)
      const file = opened
      const revision = revisionOf(file.stat)
      const { maxReadScanBytes, readTimeoutSeconds } = context.settings
      // Bounded in bytes scanned and in time (issue 14): a large start_line on a huge or sparse
      // file ends with READ_LIMIT_EXCEEDED instead of holding the server. The deadline
      // interrupts between two chunk reads (waiting for the one in flight); the fd is closed after.
      const finish = (page: Page) =>
        finishPage(page, file, resolved, revision, maxReadScanBytes, readTimeoutSeconds, at)
      // The fd is closed here unless the further reads take it over (and close it when they end).
      let handedOver = false
      try {
        const start = beginPage(file.fd, file.stat.size, {
          startLine: window.startLine,
          maxLines: Math.min(window.maxLines, resolved.workdir.maxReadLines),
          maxBytes: resolved.workdir.maxReadBytes,
          maxScanBytes: maxReadScanBytes,
          timeoutSeconds: readTimeoutSeconds
        })
        if (start._tag === "failed") return Either.left(toWalkError(start.error, at))
        if (start._tag === "done") return finish(start.result)
        handedOver = true
        return restore(start.rest).pipe(
          Effect.mapError((e) => toWalkError(e, at)),
          Effect.flatMap(finish),
          Effect.ensuring(Effect.sync(() => close(file.fd)))
        )
      } finally {
        if (!handedOver) close(file.fd)
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
