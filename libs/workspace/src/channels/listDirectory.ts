import type { EntryInfo, ListDirectoryInput, ListDirectoryOutput, ReadError } from "@serverfs/domain"
import { AT, close, fstatatEntries, O, type ReaddirResult, readdir, readdirAsync } from "@serverfs/posix"
import { Effect, Either } from "effect"
import { type ChannelContext, resolveNow } from "../ChannelContext.js"
import { compareCodePoints, sortByCodePoint } from "../CodePointOrder.js"
import { openDirectorySync, walkErrorOf } from "../DescriptorWalk.js"
import { filterInSlices, sortInSlices } from "../EventLoopSlices.js"
import { entryTypeOfMode, timestampOfSeconds } from "../FileKind.js"
import { toWalkError } from "../OsError.js"
import { isLargeDirectory } from "../TreeWalk.js"

/**
 * lstat each name below the held directory, in one call into the addon (issue 12: a Stat object
 * per entry was most of a page's cost); a name that vanished since the scan is skipped.
 */
const describeEntries = (fd: number, relative: string, names: ReadonlyArray<string>): EntryInfo[] => {
  const stats = fstatatEntries(fd, names, AT.SYMLINK_NOFOLLOW)
  const entries: EntryInfo[] = []
  for (let i = 0; i < names.length; i++) {
    const stat = stats[i]
    if (stat === undefined) continue
    const name = names[i]!
    const type = entryTypeOfMode(stat.mode)
    entries.push({
      name,
      path: relative === "" ? name : `${relative}/${name}`,
      type,
      size: type === "file" ? stat.size : null,
      modified_at: timestampOfSeconds(stat.mtimeSeconds)
    })
  }
  return entries
}

interface Listing {
  readonly fd: number
  readonly relative: string
  readonly allowed: (name: string) => boolean
  readonly limit: number
}

/** The page of the sorted visible names, described. */
const pageOf = (
  listing: Listing,
  input: ListDirectoryInput,
  visible: ReadonlyArray<string>
): ListDirectoryOutput => {
  const entries = describeEntries(
    listing.fd,
    listing.relative,
    visible.slice(input.offset, input.offset + listing.limit)
  )
  return {
    workdir: input.workdir,
    path: input.path,
    entries,
    offset: input.offset,
    limit: listing.limit,
    returned: entries.length,
    has_more: input.offset + listing.limit < visible.length
  }
}

/**
 * A large directory (issue 14) must not hold the event loop: read on the thread pool, then
 * filtered and sorted in slices with yields in between. The fd is closed when this ends, an
 * interruption included.
 */
const listLarge = (
  listing: Listing,
  input: ListDirectoryInput,
  restore: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
): Effect.Effect<ListDirectoryOutput, ReadError> => {
  const at = { workdir: input.workdir, path: input.path }
  const list = Effect.gen(function* () {
    const read: ReaddirResult = yield* Effect.tryPromise({
      try: () => readdirAsync(listing.fd),
      catch: (e) => toWalkError(e, at)
    })
    const allowed = yield* filterInSlices(read.names, listing.allowed)
    return pageOf(listing, input, yield* sortInSlices(allowed, compareCodePoints))
  })
  return restore(list).pipe(Effect.ensuring(Effect.sync(() => close(listing.fd))))
}

/**
 * list_directory (tool-contracts §2.2): one scan of the directory fd; hidden, denied and
 * reserved entries dropped on their full relative path; sorted by code point; sliced; only the
 * returned slice is lstat'ed (entries that vanish meanwhile are skipped). Symlinks are reported,
 * never followed.
 *
 * A small directory (most) is listed by plain synchronous code in one Effect.suspend: readdir,
 * filter and sort of a few thousand names cost less than the fiber steps around them (issue 12).
 */
export const listDirectory = (
  context: ChannelContext,
  input: ListDirectoryInput
): Effect.Effect<ListDirectoryOutput, ReadError> =>
  // Uninterruptible until the fd's release is in place (as acquireRelease's acquire is).
  Effect.uninterruptibleMask((restore) =>
    Effect.suspend((): Effect.Effect<ListDirectoryOutput, ReadError> => {
      const resolved = resolveNow(context, input.workdir, input.path)
      if (Either.isLeft(resolved)) return Either.left(resolved.left)
      const { workdir, relative, components } = resolved.right
      const at = { workdir: input.workdir, path: input.path }
      let fd: number
      try {
        fd = openDirectorySync(context.rootOf(workdir), components, O.PATH, at)
      } catch (error) {
        return Either.left(walkErrorOf(error, at))
      }
      const listing: Listing = {
        fd,
        relative,
        allowed: (name) => workdir.policy.checkChild(relative, name) === "allowed",
        limit: Math.min(input.limit, context.settings.maxListEntries)
      }
      if (isLargeDirectory(fd)) return listLarge(listing, input, restore)
      try {
        let read: ReaddirResult
        try {
          read = readdir(fd)
        } catch (error) {
          return Either.left(toWalkError(error, at))
        }
        return Either.right(pageOf(listing, input, sortByCodePoint(read.names.filter(listing.allowed))))
      } finally {
        close(fd)
      }
    })
  )
