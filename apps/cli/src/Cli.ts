import { createRequire } from "node:module"
import { Command } from "@effect/cli"
import { configCommand } from "./commands/configCheck.js"
import { diagnosticsCommand } from "./commands/diagnostics.js"
import { leasesCommand } from "./commands/leases.js"
import { recoverCommand } from "./commands/recover.js"
import { tasksCommand } from "./commands/tasks.js"

const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }

export const serverfs = Command.make("serverfs").pipe(
  Command.withDescription("ServerFS operator CLI."),
  Command.withSubcommands([configCommand, tasksCommand, leasesCommand, recoverCommand, diagnosticsCommand])
)

export const runCli = Command.run(serverfs, { name: "serverfs", version })
