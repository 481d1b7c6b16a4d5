import {
  type FindFilesInput,
  type FindFilesOutput,
  type ReadError,
  ResourceExhausted
} from "@serverfs/domain"
import { matcher } from "@serverfs/policy"
import { O } from "@serverfs/posix"
import { Effect } from "effect"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { openDirectory } from "../DescriptorWalk.js"
import { toWalkError } from "../OsError.js"
import { TreeWalk } from "../TreeWalk.js"

/** Directories scanned between two yields to the runtime, so a long walk never starves others. */
const DIRECTORIES_PER_STEP = 64

/**
 * find_files (tool-contracts §2.3): fnmatch on the base name of regular files, recursively from
 * a directory. truncated=true when the matches reach the limit (even at exactly the limit) or
 * when the walk hits SERVERFS_MAX_WALK_ENTRIES.
 */
export const findFiles = (
  context: ChannelContext,
  input: FindFilesInput
): Effect.Effect<FindFilesOutput, ReadError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const resolved = yield* resolve(context, input.workdir, input.path)
      const at = { workdir: input.workdir, path: input.path }
      const limit = Math.min(input.limit, context.settings.maxSearchResults)
      const root = context.rootOf(resolved.workdir)
      const fd = yield* openDirectory(root, resolved.components, O.PATH, at)
      const walk = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new TreeWalk(fd, resolved.relative, resolved.workdir.policy, context.settings.maxWalkEntries, at)
        ),
        (w) => Effect.sync(() => w.close())
      )
      const matches: Array<{ path: string }> = []
      const matches_ = matcher(input.pattern)
      let full = false
      const visitor = {
        file: (relative: string, name: string) => {
          if (!matches_(name)) return true
          matches.push({ path: relative })
          full = matches.length >= limit
          return !full
        }
      }
      while (!walk.done) {
        yield* Effect.try({
          try: () => walk.step(visitor, DIRECTORIES_PER_STEP),
          catch: (e) => (e instanceof ResourceExhausted ? e : toWalkError(e, at))
        })
        if (!walk.done) yield* Effect.yieldNow()
      }
      return { matches, returned: matches.length, truncated: full || walk.capped }
    })
  )
