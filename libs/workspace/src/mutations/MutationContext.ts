import {
  type PathPolicyError,
  RootMutationNotAllowed,
  type WorkdirNotFound,
  WorkdirReadOnly
} from "@serverfs/domain"
import { type ResolvedPath, resolvePath } from "@serverfs/policy"
import { fsync } from "@serverfs/posix"
import { Effect } from "effect"
import type { ChannelContext } from "../ChannelContext.js"
import type { LeaseError } from "../LeaseManager.js"
import { codeOf } from "../OsError.js"

/**
 * What the mutation tools share: the read context, the guard (process-wide mutation lock, then
 * the workdir lease) and the operator warning for a directory fsync that failed after commit.
 */
export interface MutationContext extends ChannelContext {
  readonly guard: <A, E, R>(
    workdir: ResolvedPath["workdir"],
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | LeaseError, R>
  readonly directoryFsyncFailed: (errno: string) => Effect.Effect<void>
}

/**
 * The common order of every mutation (tool-contracts §2): WORKDIR_NOT_FOUND → WORKDIR_READ_ONLY
 * (before any path check) → path policy → ROOT_MUTATION_NOT_ALLOWED.
 */
export const authorize = (
  context: MutationContext,
  alias: string,
  path: string
): Effect.Effect<
  ResolvedPath,
  WorkdirNotFound | WorkdirReadOnly | PathPolicyError | RootMutationNotAllowed
> =>
  Effect.gen(function* () {
    const workdir = yield* context.workdir(alias)
    if (workdir.readOnly) return yield* new WorkdirReadOnly({ workdir: alias })
    const resolved = yield* resolvePath(workdir, path)
    if (resolved.components.length === 0) return yield* new RootMutationNotAllowed({ workdir: alias, path })
    return resolved
  })

/**
 * fsync of the parent directory after a visible commit. A failure means "not durable across a
 * crash", not "nothing happened": it is logged for the operator and the call still reports the
 * mutation it performed (spec v0.2 §6).
 */
export const syncDirectory = (context: MutationContext, directoryFd: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    try {
      fsync(directoryFd)
      return Effect.void
    } catch (error) {
      return context.directoryFsyncFailed(codeOf(error) ?? "unknown")
    }
  })
