import {
  AgentDisabled,
  AgentProfileNotAllowed,
  AgentRuntimeNotAllowed,
  InvalidWorkdirPath,
  type Profile,
  profileRank
} from "@serverfs/domain"
import { Either } from "effect"
import { NATIVE_RUNTIMES } from "./AgentSettings.js"
import type { Workdir } from "./Workdir.js"

export type SubmitRefusal =
  | AgentDisabled
  | AgentRuntimeNotAllowed
  | AgentProfileNotAllowed
  | InvalidWorkdirPath

/**
 * May this task be submitted in this workdir (spec v0.3 §10, v0.7 §2.1)? The one home of the
 * rule, checked by serverfs-mcp before it calls the bridge and by the bridge itself (it never
 * trusts its caller): the workdir's agent mode, its runtime allowlist, the profile's rank against
 * the mode, native runtimes only with workspace-write, and no backslash in the start path (a
 * Windows separator would name a different directory than the client meant). Pure; the start
 * directory's walk is libs/workspace's StartDirectory.
 */
export const authorizeSubmission = (
  workdir: Workdir,
  request: { readonly runtime: string; readonly profile: Profile; readonly path: string }
): Either.Either<void, SubmitRefusal> => {
  if (workdir.agentMode === "disabled") {
    return Either.left(new AgentDisabled({ message: `Agent delegation is disabled for ${workdir.alias}` }))
  }
  if (!workdir.agentRuntimes.some((name) => name === request.runtime)) {
    return Either.left(
      new AgentRuntimeNotAllowed({
        message: `runtime '${request.runtime}' is not allowed for ${workdir.alias}`
      })
    )
  }
  if (
    profileRank(request.profile) > profileRank(workdir.agentMode) ||
    (NATIVE_RUNTIMES.has(request.runtime) && request.profile !== "workspace-write")
  ) {
    return Either.left(
      new AgentProfileNotAllowed({
        message: `profile ${request.profile} is not allowed for runtime ${request.runtime} in ${workdir.alias}`
      })
    )
  }
  if (request.path.includes("\\")) {
    return Either.left(new InvalidWorkdirPath({ message: "the task path is not a valid workdir path" }))
  }
  return Either.void
}
