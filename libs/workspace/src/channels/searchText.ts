import {
  InvalidArgument,
  type ReadError,
  ResourceExhausted,
  SearchFailed,
  type SearchMatch,
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

/** Room left in the response budget for everything but the matches array. */
const ENVELOPE_BYTES = 1024

/**
 * Bytes the matches of one response may take, so that the result — encoded twice by the call
 * pipeline (text + structuredContent) — stays within SERVERFS_MAX_RESPONSE_BYTES.
 */
export const matchBudget = (maxResponseBytes: number): number =>
  Math.floor(maxResponseBytes / 2) - ENVELOPE_BYTES

/**
 * search_text (tool-contracts §2.4): literal search with ripgrep in the held search directory.
 * Every result path is checked again against the workdir policy and confirmed through the
 * descriptor walk; rg is stopped once limit+1 valid matches are in, and truncated=true means
 * strictly more than `limit` exist.
 *
 * The response is bounded in bytes too (issue 14): a matched line longer than
 * SERVERFS_SEARCH_MAX_LINE_BYTES is returned as a preview marked `text_truncated: true`, and
 * matches stop (truncated=true) before their encoded size would exceed the search's share of the
 * response budget.
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
      const maxLineBytes = context.settings.searchMaxLineBytes
      const budget = matchBudget(context.settings.maxResponseBytes)
      const output = (m: RawMatch): SearchMatch => ({
        path: resolved.relative === "" ? m.path : `${resolved.relative}/${m.path}`,
        line: m.line,
        text: m.text,
        ...(m.truncated ? { text_truncated: true as const } : {})
      })
      // Matches are confirmed through the descriptor walk in batches while rg runs, and only
      // confirmed ones count towards the limit: a match the walk refuses (a raced directory, a
      // file rg transcoded from UTF-16) must neither use up the limit nor make `truncated` true.
      const confirmed: SearchMatch[] = []
      let confirmedBytes = 0
      let overBudget = false
      let pending: RawMatch[] = []
      let confirmError: unknown
      const settle = () => {
        for (const match of confirmMatches(fd, pending, maxLineBytes)) {
          if (overBudget) break
          const out = output(match)
          // +1: the comma between two array elements.
          const bytes = Buffer.byteLength(JSON.stringify(out)) + 1
          if (confirmedBytes + bytes > budget) overBudget = true
          else {
            confirmed.push(out)
            confirmedBytes += bytes
          }
        }
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
          timeoutSeconds: context.settings.searchTimeoutSeconds,
          maxLineBytes
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
          return confirmed.length <= limit && !overBudget
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
      const matches = confirmed.slice(0, limit)
      return { matches, returned: matches.length, truncated: confirmed.length > limit || overBudget }
    })
  )
