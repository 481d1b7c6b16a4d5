import { createRequire } from "node:module"
import { Command } from "@effect/cli"
import { Layer } from "effect"
import { BridgeConnection } from "./BridgeConnection.js"
import { ConfigurationLive } from "./ConfigurationLive.js"
import { configCommand } from "./commands/configCheck.js"
import { diagnosticsCommand } from "./commands/diagnostics.js"
import { doctorCommand } from "./commands/doctor.js"
import { leasesCommand } from "./commands/leases.js"
import { metricsCommand } from "./commands/metrics.js"
import { recoverCommand } from "./commands/recover.js"
import { tasksCommand } from "./commands/tasks.js"

const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }

/**
 * What the commands that talk to the bridge need: the configuration (for the socket, the
 * timeout and the workdirs' slots) and the client over it. Provided per command, not in main.ts:
 * `--help`, `--version`, `config check` and `doctor` must work when the configuration is broken.
 */
const OperatorLive = BridgeConnection.pipe(Layer.provideMerge(ConfigurationLive))

export const serverfs = Command.make("serverfs").pipe(
  Command.withDescription("ServerFS operator CLI."),
  Command.withSubcommands([
    configCommand,
    doctorCommand,
    tasksCommand.pipe(Command.provide(OperatorLive)),
    leasesCommand.pipe(Command.provide(OperatorLive)),
    recoverCommand.pipe(Command.provide(OperatorLive)),
    diagnosticsCommand.pipe(Command.provide(OperatorLive)),
    metricsCommand.pipe(Command.provide(OperatorLive))
  ])
)

export const runCli = Command.run(serverfs, { name: "serverfs", version })
