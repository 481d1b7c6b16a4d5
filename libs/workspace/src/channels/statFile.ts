import type { ReadError, StatFileInput, StatFileOutput } from "@serverfs/domain"
import { AT, fstat, fstatat, O, type Stat } from "@serverfs/posix"
import { Effect } from "effect"
import mime from "mime-types"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { openParent } from "../DescriptorWalk.js"
import { entryTypeOfMode, timestampOf } from "../FileKind.js"
import { toWalkError } from "../OsError.js"
import { revisionOf } from "../Revision.js"

/** MIME type guessed from the name only (never from content), octet-stream when unknown. */
export const mimeTypeOf = (name: string): string => mime.lookup(name) || "application/octet-stream"

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
