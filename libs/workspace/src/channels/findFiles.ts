import {
  type FindFilesInput,
  type FindFilesOutput,
  type ReadError,
  ResourceExhausted
} from "@serverfs/domain"
import { compilePathGlob, type GlobState, isPathGlob, matcher } from "@serverfs/policy"
import { O, readdirAsync } from "@serverfs/posix"
import { Effect, Either } from "effect"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { openDirectory } from "../DescriptorWalk.js"
import { SLICE_MS, sortInSlices, yieldToEventLoop } from "../EventLoopSlices.js"
import { toWalkError } from "../OsError.js"
import { orderOf, TreeWalk, type WalkVisitor } from "../TreeWalk.js"

/**
 * Entries visited between two yields to the event loop, so a long walk never starves others:
 * a policy check and a match cost up to about ten microseconds on a loaded machine, so a step is
 * a few milliseconds.
 */
const ENTRIES_PER_STEP = 512

/**
 * Which files a pattern selects, as a walk visitor's two questions. Without "/", fnmatch on the
 * base name (tool-contracts §2.3), every directory entered. With "/", a path glob (PathGlob.ts)
 * on the path below the search directory: each directory carries the glob's states after its
 * path, so a file costs only its own name, and a directory no file below which can match is not
 * opened (`src/**` never walks `node_modules`).
 */
interface Selection<T> {
  readonly rootTag: T
  readonly directory?: (name: string, parent: T) => T | undefined
  readonly matches: (name: string, directory: T) => boolean
}

const selectionOf = (pattern: string): Selection<GlobState | undefined> => {
  if (!isPathGlob(pattern)) {
    const matches = matcher(pattern)
    return { rootTag: undefined, matches: (name) => matches(name) }
  }
  const glob = compilePathGlob(pattern)
  return {
    rootTag: glob.initial,
    directory: (name, parent) => {
      if (parent === undefined) return undefined
      const next = glob.advance(parent, name)
      return next !== undefined && glob.mayMatchBelow(next) ? next : undefined
    },
    matches: (name, directory) => directory !== undefined && glob.matchesFile(directory, name)
  }
}

/**
 * find_files (tool-contracts §2.3): fnmatch on the base name of regular files, recursively from
 * a directory, or a path glob when the pattern has a "/" (deviation: the reference matches base
 * names only). truncated=true when the matches reach the limit (even at exactly the limit) or
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
      const selection = selectionOf(input.pattern)
      const walk = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new TreeWalk(
              fd,
              resolved.relative,
              resolved.workdir.policy,
              context.settings.maxWalkEntries,
              at,
              selection.rootTag
            )
        ),
        (w) => Effect.sync(() => w.close())
      )
      const matches: Array<{ path: string }> = []
      let full = false
      const visitor: WalkVisitor<GlobState | undefined> = {
        ...(selection.directory === undefined ? {} : { directory: selection.directory }),
        file: (relative, name, directory) => {
          if (!selection.matches(name, directory)) return true
          matches.push({ path: relative })
          full = matches.length >= limit
          return !full
        }
      }
      const walkError = (e: unknown) => (e instanceof ResourceExhausted ? e : toWalkError(e, at))
      // Yield once a slice of SLICE_MS has been used, not after every step: a macrotask per 512
      // entries made an ordinary 24,000-file walk about a fifth slower.
      let sliceStarted = performance.now()
      while (!walk.done) {
        const request = yield* Effect.try({
          try: () => walk.step(visitor, ENTRIES_PER_STEP),
          catch: walkError
        })
        if (request !== undefined) {
          // A large directory: read on the thread pool, ordered in slices.
          // Either way round: a failure goes back to the walk, which knows whether it matters.
          const listed = yield* Effect.promise(() =>
            Promise.resolve(request.fd)
              .then(readdirAsync)
              .then(Either.right, (e: unknown) => Either.left(e))
          )
          if (listed._tag === "Left") {
            yield* Effect.try({ try: () => walk.listFailed(listed.left), catch: walkError })
          } else {
            const names = listed.right.names
            const order = yield* sortInSlices(
              names.map((_, i) => i),
              orderOf(names)
            )
            walk.listed(listed.right, order)
          }
        }
        if (!walk.done && performance.now() - sliceStarted >= SLICE_MS) {
          yield* yieldToEventLoop
          sliceStarted = performance.now()
        }
      }
      return { matches, returned: matches.length, truncated: full || walk.capped }
    })
  )
