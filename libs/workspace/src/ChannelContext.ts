import { type PathPolicyError, WorkdirNotFound } from "@serverfs/domain"
import { type GlobalSettings, type ResolvedPath, resolvePath, type Workdir } from "@serverfs/policy"
import { Effect, Either } from "effect"

/**
 * What every channel needs: the workdir lookup, the held roots and the global limits. Built once
 * by the ReadChannels / Mutations services; channels are plain functions of it.
 */
export interface ChannelContext {
  readonly settings: GlobalSettings
  readonly workdir: (alias: string) => Effect.Effect<Workdir, WorkdirNotFound>
  /** The same lookup as a plain value, for channels that run as synchronous code (issue 12). */
  readonly lookup: (alias: string) => Either.Either<Workdir, WorkdirNotFound>
  readonly rootOf: (workdir: Workdir) => number
}

/** The synchronous workdir lookup over the registry's workdirs (WorkdirRegistry.get's rule). */
export const workdirLookup = (
  workdirs: ReadonlyArray<Workdir>
): ((alias: string) => Either.Either<Workdir, WorkdirNotFound>) => {
  const byAlias = new Map(workdirs.map((w) => [w.alias, w] as const))
  return (alias) => {
    const workdir = byAlias.get(alias)
    return workdir === undefined
      ? Either.left(new WorkdirNotFound({ workdir: alias }))
      : Either.right(workdir)
  }
}

/** Workdir lookup then the path policy: the common first two steps of every path channel. */
export const resolve = (
  context: ChannelContext,
  alias: string,
  path: string
): Effect.Effect<ResolvedPath, WorkdirNotFound | PathPolicyError> =>
  Effect.flatMap(context.workdir(alias), (workdir) => resolvePath(workdir, path))

/** The same two steps as a plain value. */
export const resolveNow = (
  context: ChannelContext,
  alias: string,
  path: string
): Either.Either<ResolvedPath, WorkdirNotFound | PathPolicyError> =>
  Either.flatMap(context.lookup(alias), (workdir) => resolvePath(workdir, path))
