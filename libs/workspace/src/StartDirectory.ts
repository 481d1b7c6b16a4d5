import {
  InvalidWorkdirPath,
  type PathPolicyError,
  type WalkError,
  WorkdirPathNotFound
} from "@serverfs/domain"
import { type ResolvedPath, resolvePath, type Workdir } from "@serverfs/policy"
import { close, O } from "@serverfs/posix"
import { Effect } from "effect"
import { openDirectorySync, walkErrorOf } from "./DescriptorWalk.js"

/**
 * A task's start directory (spec v0.3 §10): the workdir's full path policy, then the descriptor
 * walk from the workdir's root (O_PATH: nothing is read) — it must exist and be a directory,
 * reached without symlinks. The descriptor is closed before this returns. serverfs-mcp reports
 * the filesystem plane's errors as they are; the bridge maps them with `toSubmitPathError`.
 *
 * Plain synchronous code in one `Effect.try`, as the read channels (issue 12): the walk holds the
 * descriptor only between two syscalls, and a scope with an acquireRelease around them cost more
 * than the walk itself on every task.submit.
 */
export const walkStartDirectory = (
  root: number,
  workdir: Workdir,
  path: string
): Effect.Effect<ResolvedPath, PathPolicyError | WalkError> =>
  Effect.flatMap(resolvePath(workdir, path), (resolved) => {
    const at = { workdir: workdir.alias, path }
    return Effect.try({
      try: () => {
        close(openDirectorySync(root, resolved.components, O.PATH, at))
        return resolved
      },
      catch: (e) => walkErrorOf(e, at)
    })
  })

/** The bridge's codes for a refused start directory; the message never names a host path. */
export const toSubmitPathError = (
  error: PathPolicyError | WalkError
): WorkdirPathNotFound | InvalidWorkdirPath =>
  error._tag === "PATH_NOT_FOUND"
    ? new WorkdirPathNotFound({ message: "the task path does not exist" })
    : error._tag === "NOT_A_DIRECTORY"
      ? new InvalidWorkdirPath({ message: "the task path is not a directory" })
      : new InvalidWorkdirPath({ message: "the task path is not a valid workdir path" })
