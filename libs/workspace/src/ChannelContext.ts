import type { PathPolicyError, WorkdirNotFound } from "@serverfs/domain"
import { type GlobalSettings, type ResolvedPath, resolvePath, type Workdir } from "@serverfs/policy"
import { Effect } from "effect"

/**
 * What every channel needs: the workdir lookup, the held roots and the global limits. Built once
 * by the ReadChannels / Mutations services; channels are plain functions of it.
 */
export interface ChannelContext {
  readonly settings: GlobalSettings
  readonly workdir: (alias: string) => Effect.Effect<Workdir, WorkdirNotFound>
  readonly rootOf: (workdir: Workdir) => number
}

/** Workdir lookup then the path policy: the common first two steps of every path channel. */
export const resolve = (
  context: ChannelContext,
  alias: string,
  path: string
): Effect.Effect<ResolvedPath, WorkdirNotFound | PathPolicyError> =>
  Effect.flatMap(context.workdir(alias), (workdir) => resolvePath(workdir, path))
