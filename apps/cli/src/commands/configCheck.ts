import { Command } from "@effect/cli"
import {
  type BridgeSettings,
  Configuration,
  loadBridgeSettingsFor,
  type ServerConfiguration,
  slotId
} from "@serverfs/policy"
import { Console, Effect } from "effect"

/** The value of the Configuration service: the parsed configuration and the unread names. */
type LoadedConfiguration = ServerConfiguration & { readonly unknownVariables: ReadonlyArray<string> }

/**
 * `serverfs config check`: parse the configuration exactly as serverfs-mcp does (environment
 * plus SERVERFS_ENV_FILE) and summarise it. Host paths are not printed: the summary is safe to
 * paste into a ticket.
 */
export const summarize = (
  { global, workdirs, unknownVariables }: LoadedConfiguration,
  bridge?: BridgeSettings
): string => {
  const lines = [
    `configuration ok: ${workdirs.length} workdir(s), ${workdirs.filter((w) => !w.readOnly).length} read-write`,
    `log level ${global.logLevel}; hidden paths ${global.allowHidden ? "allowed" : "refused"}; built-in deny rules ${global.disableDefaultDeny ? "off" : "on"}; ${global.extraDenyGlobs.length} extra deny glob(s)`,
    `agent bridge ${global.agentBridgeEnabled ? "enabled" : "disabled"}`
  ]
  if (bridge !== undefined) {
    lines.push(
      `  bridge: task timeout ${bridge.taskTimeoutSeconds}s, interaction timeout ${bridge.interactionTimeoutSeconds}s, ` +
        `${bridge.maxActiveTasks} active task(s), retention ${bridge.retentionSeconds / 3600}h, ` +
        `spool above ${bridge.resultSpoolThresholdBytes} bytes, scripted runtime ${bridge.enableFakeRuntime ? "on" : "off"}, ` +
        `peer ${bridge.peerUid ?? "own uid"}/${bridge.peerGid ?? "own gid"}`
    )
  }
  for (const w of workdirs) {
    const agent =
      w.agentMode === "disabled" ? "agents off" : `agents ${w.agentMode} (${w.agentRuntimes.join(", ")})`
    lines.push(
      `  WORKDIR_${slotId(w.slot)} ${w.alias}: ${w.readOnly ? "read-only" : "read-write"}, ${agent}, ` +
        `hidden ${w.policy.settings.allowHidden ? "allowed" : "refused"}, ${w.policy.extraRuleCount} deny glob(s), ` +
        `read ${w.maxReadLines} lines/${w.maxReadBytes} bytes, write ${w.maxWriteBytes} bytes`
    )
  }
  if (unknownVariables.length > 0) {
    lines.push(
      `warning: ${unknownVariables.length} variable(s) that ServerFS does not read (misspelled?): ${unknownVariables.join(", ")}`
    )
  }
  return lines.join("\n")
}

export const configCheck = Command.make("check", {}, () =>
  Effect.gen(function* () {
    const configuration = yield* Configuration
    // The bridge reads the same environment: its own settings are validated here too.
    const bridge = configuration.global.agentBridgeEnabled
      ? yield* loadBridgeSettingsFor(configuration.workdirs)
      : undefined
    yield* Console.log(summarize(configuration, bridge))
  })
).pipe(
  Command.withDescription(
    "Validate the ServerFS configuration (environment + SERVERFS_ENV_FILE) and summarise it."
  )
)

export const configCommand = Command.make("config").pipe(
  Command.withDescription("Configuration tools."),
  Command.withSubcommands([configCheck])
)
