import { createRequire } from "node:module"
import { Command } from "@effect/cli"
import { configCommand } from "./commands/configCheck.js"
import { doctorCommand } from "./commands/doctor.js"

const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }

export const serverfs = Command.make("serverfs").pipe(
  Command.withDescription("ServerFS operator CLI."),
  Command.withSubcommands([configCommand, doctorCommand])
)

export const runCli = Command.run(serverfs, { name: "serverfs", version })
