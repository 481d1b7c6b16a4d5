import type { ServerConfiguration } from "@serverfs/policy"
import { hasOpenat2 } from "@serverfs/posix"
import type { AuditFields } from "@serverfs/telemetry-local"

/**
 * Fields of the `startup` event (tool-contracts §7): counts and switches only — never an alias
 * list, a host path or the text of a deny glob.
 */
export const startupFields = ({ global, workdirs }: ServerConfiguration): AuditFields => ({
  workdirs: workdirs.length,
  read_write_workdirs: workdirs.filter((w) => !w.readOnly).length,
  log_level: global.logLevel,
  global_allow_hidden: global.allowHidden,
  global_default_deny_enabled: !global.disableDefaultDeny,
  global_extra_deny_rule_count: global.extraDenyGlobs.length,
  workdirs_with_policy_overrides: workdirs.filter(
    (w) =>
      w.policy.settings.allowHidden !== global.allowHidden ||
      w.policy.settings.disableDefaultDeny !== global.disableDefaultDeny ||
      w.policy.extraRuleCount !== global.extraDenyGlobs.length ||
      w.maxReadBytes !== global.maxReadBytes ||
      w.maxReadLines !== global.maxReadLines ||
      w.maxWriteBytes !== global.maxWriteBytes
  ).length,
  agent_bridge_enabled: global.agentBridgeEnabled,
  agent_enabled_workdirs: workdirs.filter((w) => w.agentMode !== "disabled").length,
  path_resolution: hasOpenat2 ? "openat2+descriptor-walk" : "descriptor-walk"
})
