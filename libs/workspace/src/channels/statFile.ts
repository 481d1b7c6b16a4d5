import type { ReadError, StatFileInput, StatFileOutput } from "@serverfs/domain"
import { AT, fstat, fstatat, O, type Stat } from "@serverfs/posix"
import { Effect } from "effect"
import mime from "mime-types"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { openParent } from "../DescriptorWalk.js"
import { entryTypeOfMode, timestampOf } from "../FileKind.js"
import { toWalkError } from "../OsError.js"
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
 */
export const statFile = (
  context: ChannelContext,
  input: StatFileInput
): Effect.Effect<StatFileOutput, ReadError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const resolved = yield* resolve(context, input.workdir, input.path)
      const at = { workdir: input.workdir, path: input.path }
      const root = context.rootOf(resolved.workdir)
      let stat: Stat
      if (resolved.components.length === 0) {
        stat = yield* Effect.try({ try: () => fstat(root), catch: (e) => toWalkError(e, at) })
      } else {
        const parent = yield* openParent(root, resolved.components, O.PATH, at)
        stat = yield* Effect.try({
          try: () => fstatat(parent.fd, parent.name, AT.SYMLINK_NOFOLLOW),
          catch: (e) => toWalkError(e, at)
        })
      }
      const type = entryTypeOfMode(stat.mode)
      const name = resolved.components[resolved.components.length - 1] ?? ""
      return {
        workdir: input.workdir,
        path: input.path,
        type,
        size: type === "file" ? stat.size : null,
        modified_at: timestampOf(stat.mtimeNs),
        mime_type: type === "file" ? mimeTypeOf(name) : null,
        revision: revisionOf(stat)
      }
    })
  )
