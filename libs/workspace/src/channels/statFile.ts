import type { ReadError, StatFileInput, StatFileOutput } from "@serverfs/domain"
import { AT, close, fstat, fstatat, O, type Stat } from "@serverfs/posix"
import { Effect, Either } from "effect"
import mime from "mime-types"
import { type ChannelContext, resolveNow } from "../ChannelContext.js"
import { openDirectorySync, walkErrorOf } from "../DescriptorWalk.js"
import { entryTypeOfMode, timestampOf } from "../FileKind.js"
import { revisionOf } from "../Revision.js"
import { SOURCE_MIME_TYPES } from "./SourceMimeTypes.js"

/**
 * MIME type guessed from the name only (never from content), octet-stream when unknown. Only the
 * last extension counts, as `path.extname` sees it: a name without one (`Makefile`, `.profile`, a
 * file called `ts`) is octet-stream. The source-file table comes first (`.ts` is not `video/mp2t`
 * here), then the `mime-types` table.
 */
export const mimeTypeOf = (name: string): string => {
  const dot = name.lastIndexOf(".")
  if (dot <= 0 || dot === name.length - 1) return "application/octet-stream"
  const extension = name.slice(dot + 1).toLowerCase()
  const source = Object.hasOwn(SOURCE_MIME_TYPES, extension) ? SOURCE_MIME_TYPES[extension] : undefined
  return source ?? (mime.lookup(extension) || "application/octet-stream")
}

/**
 * stat_file (tool-contracts §2.6): lstat of the final component through the walk; a final symlink
 * is reported as `symlink` (its target never revealed); "" is the root.
 *
 * Plain synchronous code in one Effect.suspend (issue 12): every step is a syscall on the event
 * loop, so a chain of effects (scope, acquire/release, one Effect.try per call) bought nothing
 * but per-call fiber work. The parent fd is closed before this returns, whatever happens.
 */
const statNow = (context: ChannelContext, input: StatFileInput): Either.Either<StatFileOutput, ReadError> => {
  const resolved = resolveNow(context, input.workdir, input.path)
  if (Either.isLeft(resolved)) return Either.left(resolved.left)
  const { components, workdir } = resolved.right
  const at = { workdir: input.workdir, path: input.path }
  const root = context.rootOf(workdir)
  const name = components[components.length - 1] ?? ""
  let stat: Stat
  try {
    if (components.length === 0) {
      stat = fstat(root)
    } else {
      const parent = openDirectorySync(root, components.slice(0, -1), O.PATH, at)
      try {
        stat = fstatat(parent, name, AT.SYMLINK_NOFOLLOW)
      } finally {
        close(parent)
      }
    }
  } catch (error) {
    return Either.left(walkErrorOf(error, at))
  }
  const type = entryTypeOfMode(stat.mode)
  return Either.right({
    workdir: input.workdir,
    path: input.path,
    type,
    size: type === "file" ? stat.size : null,
    modified_at: timestampOf(stat.mtimeNs),
    mime_type: type === "file" ? mimeTypeOf(name) : null,
    revision: revisionOf(stat)
  })
}

export const statFile = (
  context: ChannelContext,
  input: StatFileInput
): Effect.Effect<StatFileOutput, ReadError> => Effect.suspend(() => statNow(context, input))
