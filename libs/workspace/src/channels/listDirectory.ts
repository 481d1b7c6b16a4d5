import type { EntryInfo, ListDirectoryInput, ListDirectoryOutput, ReadError } from "@serverfs/domain"
import { AT, fstatat, O, readdir, readdirAsync } from "@serverfs/posix"
import { Effect } from "effect"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { compareCodePoints } from "../CodePointOrder.js"
import { openDirectory } from "../DescriptorWalk.js"
import { filterInSlices, sortInSlices } from "../EventLoopSlices.js"
import { entryTypeOfMode, timestampOf } from "../FileKind.js"
import { toWalkError } from "../OsError.js"
import { isLargeDirectory } from "../TreeWalk.js"

/** lstat each name below the held directory; a name that vanished since the scan is skipped. */
const describeEntries = (fd: number, relative: string, names: ReadonlyArray<string>): EntryInfo[] => {
  const entries: EntryInfo[] = []
  for (const name of names) {
    let stat: ReturnType<typeof fstatat>
    try {
      stat = fstatat(fd, name, AT.SYMLINK_NOFOLLOW)
    } catch {
      continue
    }
    const type = entryTypeOfMode(stat.mode)
    entries.push({
      name,
      path: relative === "" ? name : `${relative}/${name}`,
      type,
      size: type === "file" ? stat.size : null,
      modified_at: timestampOf(stat.mtimeNs)
    })
  }
  return entries
}

/**
 * list_directory (tool-contracts §2.2): one scan of the directory fd; hidden, denied and
 * reserved entries dropped on their full relative path; sorted by code point; sliced; only the
 * returned slice is lstat'ed (entries that vanish meanwhile are skipped). Symlinks are reported,
 * never followed.
 *
 * A directory of hundreds of thousands of entries must not hold the event loop (issue 14): it is
 * read on the thread pool, then filtered and sorted in slices with yields in between.
 */
export const listDirectory = (
  context: ChannelContext,
  input: ListDirectoryInput
): Effect.Effect<ListDirectoryOutput, ReadError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const resolved = yield* resolve(context, input.workdir, input.path)
      const at = { workdir: input.workdir, path: input.path }
      const limit = Math.min(input.limit, context.settings.maxListEntries)
      const root = context.rootOf(resolved.workdir)
      const fd = yield* openDirectory(root, resolved.components, O.PATH, at)
      // A large directory is read on the thread pool; a small one inline, which is cheaper.
      const listing = isLargeDirectory(fd)
        ? yield* Effect.tryPromise({ try: () => readdirAsync(fd), catch: (e) => toWalkError(e, at) })
        : yield* Effect.try({ try: () => readdir(fd), catch: (e) => toWalkError(e, at) })
      const policy = resolved.workdir.policy
      const allowed = yield* filterInSlices(
        listing.names,
        (name) => policy.checkChild(resolved.relative, name) === "allowed"
      )
      const visible = yield* sortInSlices(allowed, compareCodePoints)
      const entries = describeEntries(
        fd,
        resolved.relative,
        visible.slice(input.offset, input.offset + limit)
      )
      return {
        workdir: input.workdir,
        path: input.path,
        entries,
        offset: input.offset,
        limit,
        returned: entries.length,
        has_more: input.offset + limit < visible.length
      }
    })
  )
