#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { exitTeardown, type ProgramExit, withExitCode } from "@serverfs/policy"
import { Effect } from "effect"
import { runCli } from "./Cli.js"

/**
 * serverfs: the operator CLI. Exit codes: 0 ok, 2 configuration error (one line naming the
 * variable, as the servers print it), 1 anything else (including usage errors: an unknown
 * subcommand, option or argument is refused by @effect/cli). The configuration is not provided
 * here: a command that needs it provides ConfigurationLive itself, so --help, --version,
 * `config check` and `doctor` still work when the configuration is broken.
 */
const MainLive = NodeContext.layer

const exitPolicy: ProgramExit = {
  auditConfigurationErrors: false,
  exitOnSuccess: false,
  interruptedExitCode: 1
}

NodeRuntime.runMain(withExitCode(Effect.provide(runCli(process.argv), MainLive), exitPolicy), {
  disableErrorReporting: true,
  teardown: exitTeardown(exitPolicy)
})
