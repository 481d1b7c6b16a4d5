import { FrozenErrorClass } from "./FrozenErrorClass.js"
import { shown } from "./Location.js"

/**
 * The shared workdir lease between MCP mutations and Agent Bridge writers
 * (bridge-internals, lease and recovery-guard sections).
 */
export class WorkdirBusy extends FrozenErrorClass("WORKDIR_BUSY", {
  workdir: "string"
}) {
  override get message() {
    return `${shown(this.workdir)} has an active Agent writer`
  }
}

export class WorkdirRecoveryRequired extends FrozenErrorClass("WORKDIR_RECOVERY_REQUIRED", {
  workdir: "string"
}) {
  override get message() {
    return `${shown(this.workdir)} has unresolved Agent recovery state`
  }
}

export class AgentLockUnavailable extends FrozenErrorClass("AGENT_LOCK_UNAVAILABLE", { workdir: "string" }) {
  override get message() {
    return `the Agent lease for ${shown(this.workdir)} is unavailable`
  }
}
