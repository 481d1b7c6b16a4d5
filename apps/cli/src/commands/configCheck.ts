import { Command } from "@effect/cli"
import {
  type BridgeSettings,
  ConfigurationErrors,
  type ConfigurationReport,
  inspectConfiguration,
  type ResolvedRuntimePath,
  type ServerConfiguration,
  slotId
} from "@serverfs/policy"
import { Console, Effect } from "effect"
import { json } from "../output/JsonOption.js"
import { printable, renderTable } from "../output/Table.js"

/**
 * `serverfs config check`: the configuration exactly as serverfs-mcp and serverfs-bridge read it
 * (environment plus SERVERFS_ENV_FILE), with every problem at once. Each error goes to stderr as
 * the one line a server would print (so a script that greps the server's line finds it here);
 * stdout has the summary, the effective value and source of every setting, and the warnings.
 * Exit 2 when there is any error, 0 otherwise (warnings included).
 *
 * Host paths of workdirs are not printed (aliases and slots only): the report is safe to paste
 * into a ticket. The env file's path and the bridge's own paths (socket, lock and state
 * directories) are settings the operator chose and needs to see, so they are shown, with where
 * each came from when the bridge is enabled: a variable, or the user-scoped XDG default.
 */

/** A value longer than this is cut in the human table (the JSON has it whole). */
const SHOWN_VALUE_CHARS = 72

export const summarize = ({ global, workdirs }: ServerConfiguration, bridge?: BridgeSettings): string => {
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
  return lines.join("\n")
}

const cut = (text: string): string => {
  const chars = Array.from(text)
  return chars.length > SHOWN_VALUE_CHARS ? `${chars.slice(0, SHOWN_VALUE_CHARS - 1).join("")}…` : text
}

/** Where a path came from, in words an operator can act on. */
export const originText = ({ variable, origin }: ResolvedRuntimePath): string => {
  switch (origin) {
    case "variable":
      return `${variable} is set`
    case "system layout":
      return `${variable} is set (system layout)`
    case "XDG_DATA_HOME":
    case "XDG_STATE_HOME":
      return `default under ${origin}`
    case "HOME":
      return `default under HOME (${variable === "SERVERFS_AGENT_BRIDGE_STATE_DIR" ? "~/.local/state: XDG_STATE_HOME" : "~/.local/share: XDG_DATA_HOME"} unset or relative)`
  }
}

const PATH_NAMES: Readonly<Record<string, string>> = {
  SERVERFS_AGENT_BRIDGE_SOCKET: "socket",
  SERVERFS_AGENT_LOCK_DIR: "lock directory",
  SERVERFS_AGENT_BRIDGE_STATE_DIR: "state directory"
}

/** The bridge's paths, whole (the operator compares them between the two processes' configurations). */
const renderRuntimePaths = (paths: ReadonlyArray<ResolvedRuntimePath>): string =>
  [
    "agent bridge paths (the same for serverfs-mcp and serverfs-bridge of this user):",
    ...paths.map(
      (p) => `  ${PATH_NAMES[p.variable] ?? p.variable}: ${printable(p.path)}\n    from: ${originText(p)}`
    )
  ].join("\n")

/** The human report (stdout). Errors are not in it: they are the stderr lines. */
export const renderReport = (report: ConfigurationReport): string => {
  const sections: Array<string> = [
    `env file: ${report.envFile === null ? "none (SERVERFS_ENV_FILE is not set)" : printable(report.envFile)}`
  ]
  sections.push(
    report.errors.length === 0
      ? summarize(report.configuration, report.bridge)
      : `configuration has ${report.errors.length} error(s), listed on stderr; the servers would not start`
  )
  sections.push(
    renderTable(report.settings, [
      { header: "SETTING", cell: (s) => s.variable },
      { header: "VALUE", cell: (s) => (s.value === null ? "(error)" : s.value === "" ? "-" : cut(s.value)) },
      { header: "SOURCE", cell: (s) => s.source }
    ])
  )
  if (report.runtimePaths.length > 0) sections.push(renderRuntimePaths(report.runtimePaths))
  for (const w of report.warnings) {
    sections.push(`warning: ${w.variable === null ? "" : `${w.variable}: `}${printable(w.message)}`)
  }
  return sections.join("\n")
}

/** The `--json` document. Its keys are a contract (pinned in apps/cli/test/configCheck.test.ts). */
export const reportJson = (report: ConfigurationReport) => ({
  ok: report.errors.length === 0,
  envFile: report.envFile,
  errors: report.errors.map((e) => ({ variable: e.variable, message: e.message })),
  warnings: report.warnings.map((w) => ({ variable: w.variable, message: w.message })),
  settings: report.settings.map((s) => ({ variable: s.variable, value: s.value, source: s.source })),
  workdirs:
    report.errors.length === 0
      ? report.configuration.workdirs.map((w) => ({
          slot: slotId(w.slot),
          alias: w.alias,
          readOnly: w.readOnly,
          agentMode: w.agentMode,
          agentRuntimes: w.agentRuntimes
        }))
      : [],
  unknownVariables: report.unknownVariables,
  runtimePaths: report.runtimePaths.map((p) => ({ variable: p.variable, path: p.path, origin: p.origin }))
})

/** The report of this process's environment (the CLI's own uid decides the root warning). */
export const currentReport = Effect.sync(() => inspectConfiguration(process.env, { uid: process.getuid?.() }))

export const configCheck = Command.make("check", { json }, ({ json }) =>
  Effect.gen(function* () {
    const report = yield* currentReport
    yield* Console.log(json ? JSON.stringify(reportJson(report), null, 2) : renderReport(report))
    if (report.errors.length > 0) return yield* new ConfigurationErrors({ errors: report.errors })
  })
).pipe(
  Command.withDescription(
    "Validate the ServerFS configuration (environment + SERVERFS_ENV_FILE): every error at once, the effective value and source of every setting, and warnings. Exit 2 on any error."
  )
)

export const configCommand = Command.make("config").pipe(
  Command.withDescription("Configuration tools."),
  Command.withSubcommands([configCheck])
)
