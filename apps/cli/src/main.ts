#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { EXIT_OK, exitTeardown, type ProgramExit, withExitCode } from "@serverfs/policy"
import { Effect, Layer } from "effect"
import { runCli } from "./Cli.js"
import { Style } from "./output/Style.js"

/**
 * serverfs: the operator CLI. Exit codes, the same for every command (libs/policy ProgramExit):
 * - 0: ok — and after Ctrl-C/SIGTERM, the operator's own stop (e.g. ending `tasks events --follow`);
 * - 1: an error — a bridge error code (`serverfs: CODE: message` on stderr, or
 *   `{"error":{"code","message"}}` on stdout with --json), a usage error (an unknown subcommand,
 *   option or argument is refused by @effect/cli), anything else; `doctor`: a WARN;
 * - 2: a configuration error (one line per problem naming the variable, as the servers print
 *   them); `doctor`: a FAIL;
 * - 3: the bridge cannot be reached (AGENT_BRIDGE_UNAVAILABLE; `diagnostics task` then prints
 *   its `bridge_unavailable` disposition).
 * A command that failed has already printed why and ends with ExitWithCode. The configuration is
 * not provided here but by the commands that need it (Cli.ts), so --help, --version,
 * `config check` and `doctor` still work when it is broken.
 */
const MainLive = Layer.mergeAll(NodeContext.layer, Style.fromProcess)

const exitPolicy: ProgramExit = {
  auditConfigurationErrors: false,
  exitOnSuccess: false,
  interruptedExitCode: EXIT_OK
}

NodeRuntime.runMain(withExitCode(Effect.provide(runCli(process.argv), MainLive), exitPolicy), {
  disableErrorReporting: true,
  teardown: exitTeardown(exitPolicy)
})
