import {
  InvalidArgument,
  type ReadError,
  ResourceExhausted,
  SearchFailed,
  type SearchTextInput,
  type SearchTextOutput,
  SearchTimeout
} from "@serverfs/domain"
import { RESERVED_RG_EXCLUDES } from "@serverfs/policy"
import { close, O, openat } from "@serverfs/posix"
import { Effect } from "effect"
import { type ChannelContext, resolve } from "../ChannelContext.js"
import { openDirectory } from "../DescriptorWalk.js"
import { confirmMatches } from "../MatchVerifier.js"
import { toWalkError } from "../OsError.js"
import { type RawMatch, runRipgrep } from "../Ripgrep.js"

/** Version-control directories are never searched, even with hidden paths allowed. */
const VCS_NAMES = new Set([".git", ".hg", ".svn"])
const VCS_EXCLUDES = [...VCS_NAMES].map((name) => `!${name}`)

/**
 * Once confirmed matches are close to the limit, refused matches are re-confirmed in batches of
 * up to this many (one file read per batch), not one at a time.
 */
const CONFIRM_BATCH = 32

/**
 * search_text (tool-contracts §2.4): literal search with ripgrep in the held search directory.
 * Every result path is checked again against the workdir policy and confirmed through the
 * descriptor walk; rg is stopped once limit+1 valid matches are in, and truncated=true means
 * strictly more than `limit` exist.
 */
export const searchText = (
  context: ChannelContext,
  input: SearchTextInput
): Effect.Effect<SearchTextOutput, ReadError | InvalidArgument> =>
  Effect.scoped(
    Effect.gen(function* () {
      if (input.query.includes("\n") || input.query.includes("\0")) {
        return yield* new InvalidArgument({
          tool: "search_text",
          field: "query",
          problem: "must be a single line without NUL characters"
        })
      }
      const resolved = yield* resolve(context, input.workdir, input.path)
      const at = { workdir: input.workdir, path: input.path }
      const limit = Math.min(input.limit, context.settings.maxSearchResults)
      // Inside a VCS directory there is nothing to search (rg's excludes only apply below its root).
      if (resolved.components.some((c) => VCS_NAMES.has(c)))
        return { matches: [], returned: 0, truncated: false }
      const root = context.rootOf(resolved.workdir)
      const fd = yield* openDirectory(root, resolved.components, O.PATH, at)
      // rg must be able to enter and list the root; otherwise say why (ACCESS_DENIED) instead of
      // answering with an empty result or a failed search. Opening "." through the fd needs both
      // search (lookup of ".") and read permission on the root; opening the root O_RDONLY in the
      // walk itself would only need read, and let a 0644 root through.
      yield* Effect.try({
        try: () => close(openat(fd, ".", O.RDONLY | O.DIRECTORY)),
        catch: (e) => toWalkError(e, at)
      })
      const policy = resolved.workdir.policy
      // Matches are confirmed through the descriptor walk in batches while rg runs, and only
      // confirmed ones count towards the limit: a match the walk refuses (a raced directory, a
      // file rg transcoded from UTF-16) must neither use up the limit nor make `truncated` true.
      const confirmed: RawMatch[] = []
      let pending: RawMatch[] = []
      let confirmError: unknown
      const settle = () => {
        confirmed.push(...confirmMatches(fd, pending))
        pending = []
      }
      const outcome = yield* runRipgrep(
        {
          cwdFd: fd,
          query: input.query,
          caseSensitive: input.case_sensitive,
          glob: input.glob,
          hidden: policy.settings.allowHidden,
          maxFileBytes: context.settings.searchMaxFileBytes,
          excludes: [...VCS_EXCLUDES, ...RESERVED_RG_EXCLUDES, ...policy.ripgrepExcludes()],
          timeoutSeconds: context.settings.searchTimeoutSeconds
        },
        (match) => {
          const components = [...resolved.components, ...match.path.split("/")]
          if (policy.check(components) !== "allowed") return true
          pending.push(match)
          if (pending.length >= Math.max(limit + 1 - confirmed.length, Math.min(CONFIRM_BATCH, limit + 1))) {
            try {
              settle()
            } catch (error) {
              confirmError = error
              return false
            }
          }
          return confirmed.length <= limit
        }
      )
      if (outcome._tag === "timeout") {
        return yield* new SearchTimeout({ ...at, seconds: context.settings.searchTimeoutSeconds })
      }
      if (outcome._tag === "failed") return yield* new SearchFailed()
      if (outcome._tag === "exhausted") return yield* new ResourceExhausted(at)
      const confirmFailure = (e: unknown) =>
        e instanceof ResourceExhausted ? new ResourceExhausted(at) : toWalkError(e, at)
      if (confirmError !== undefined) return yield* confirmFailure(confirmError)
      yield* Effect.try({ try: settle, catch: confirmFailure })
      const matches = confirmed.slice(0, limit).map((m) => ({
        path: resolved.relative === "" ? m.path : `${resolved.relative}/${m.path}`,
        line: m.line,
        text: m.text
      }))
      return { matches, returned: matches.length, truncated: confirmed.length > limit }
    })
  )
