import { Schema } from "effect"
import { shown } from "./Location.js"

/**
 * The shared workdir lease between MCP mutations and Agent Bridge writers
 * (bridge-internals, lease and recovery-guard sections).
 */
export class WorkdirBusy extends Schema.TaggedError<WorkdirBusy>()("WORKDIR_BUSY", {
  workdir: Schema.String
}) {
  override get message() {
    return `${shown(this.workdir)} has an active Agent writer`
  }
}

export class WorkdirRecoveryRequired extends Schema.TaggedError<WorkdirRecoveryRequired>()(
  "WORKDIR_RECOVERY_REQUIRED",
  { workdir: Schema.String }
) {
  override get message() {
    return `${shown(this.workdir)} has unresolved Agent recovery state`
  }
}

export class AgentLockUnavailable extends Schema.TaggedError<AgentLockUnavailable>()(
  "AGENT_LOCK_UNAVAILABLE",
  { workdir: Schema.String }
) {
  override get message() {
    return `the Agent lease for ${shown(this.workdir)} is unavailable`
  }
}
