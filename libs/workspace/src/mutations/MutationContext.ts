import {
  type MutationIoError,
  ParentNotFound,
  type PathPolicyError,
  RevisionConflict,
  RootMutationNotAllowed,
  type WalkError,
  type WorkdirNotFound,
  WorkdirReadOnly
} from "@serverfs/domain"
import { type ResolvedPath, resolvePath } from "@serverfs/policy"
import { AT, fstatat, fsync, O } from "@serverfs/posix"
import { Effect, type Scope } from "effect"
import type { ChannelContext } from "../ChannelContext.js"
import { openParent } from "../DescriptorWalk.js"
import type { LeaseError } from "../LeaseManager.js"
import { type At, codeOf } from "../OsError.js"
import { revisionOf } from "../Revision.js"
import { withMutationMapping } from "./MutationOsError.js"

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

/** The parent directory of a mutation target and the final name to act on. */
export interface MutationParent {
  readonly fd: number
  readonly name: string
}

/**
 * The parent of the target, opened O_RDONLY (to fsync it after the commit) from the workdir's
 * held root through the descriptor walk, with the mutation's OS-error table. With
 * `parentNotFound` (the two creates) a missing parent is PARENT_NOT_FOUND, not PATH_NOT_FOUND.
 */
export const openMutationParent = (
  context: MutationContext,
  resolved: ResolvedPath,
  at: At,
  options?: { readonly parentNotFound?: boolean }
): Effect.Effect<MutationParent, WalkError | MutationIoError | ParentNotFound, Scope.Scope> => {
  const opened = withMutationMapping(
    openParent(context.rootOf(resolved.workdir), resolved.components, O.RDONLY, at),
    at
  )
  return options?.parentNotFound === true
    ? opened.pipe(Effect.catchTag("PATH_NOT_FOUND", () => Effect.fail(new ParentNotFound(at))))
    : opened
}

/**
 * The revision checked again on the name (lstat, never following a link) just before the
 * commit: a name that is gone or unreadable, or holds another revision, is REVISION_CONFLICT.
 */
export const checkNamedRevision = (
  parent: MutationParent,
  expected: string,
  at: At
): Effect.Effect<void, RevisionConflict> =>
  Effect.flatMap(
    Effect.try({
      try: () => revisionOf(fstatat(parent.fd, parent.name, AT.SYMLINK_NOFOLLOW)),
      catch: () => new RevisionConflict(at)
    }),
    (named) => (named === expected ? Effect.void : Effect.fail(new RevisionConflict(at)))
  )

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
