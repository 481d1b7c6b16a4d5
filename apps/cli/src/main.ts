#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  Configuration,
  EnvironmentConfigProvider,
  EXIT_OK,
  exitTeardown,
  type ProgramExit,
  withExitCode
} from "@serverfs/policy"
import { Effect, Layer, Ref } from "effect"
import { BridgeConnection } from "./BridgeConnection.js"
import { runCli } from "./Cli.js"
import { CommandFailed } from "./output/Failure.js"
import { Style } from "./output/Style.js"

/**
 * serverfs: the operator CLI. Exit codes, the same for every command:
 * - 0: ok — and after Ctrl-C/SIGTERM, the operator's own stop (e.g. ending `tasks events --follow`);
 * - 1: an error — a bridge error code (`serverfs: CODE: message` on stderr, or
 *   `{"error":{"code","message"}}` on stdout with --json), a usage error, anything else;
 * - 2: a configuration error (one line naming the variable, as the servers print it);
 * - 3: the bridge cannot be reached (AGENT_BRIDGE_UNAVAILABLE; `diagnostics task` then prints
 *   its `bridge_unavailable` disposition).
 * A command that failed has already printed why (output/Failure.ts); CommandFailed carries only
 * its exit code here.
 */
const ConfigurationLive = Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider(process.env)))

const MainLive = Layer.mergeAll(NodeContext.layer, Style.fromProcess, BridgeConnection).pipe(
  Layer.provideMerge(ConfigurationLive)
)

const exitPolicy: ProgramExit = {
  auditConfigurationErrors: false,
  exitOnSuccess: false,
  interruptedExitCode: EXIT_OK
}

const program = Effect.flatMap(Ref.make(EXIT_OK), (failedWith) =>
  withExitCode(
    Effect.provide(runCli(process.argv), MainLive).pipe(
      Effect.catchIf(
        (error): error is CommandFailed => error instanceof CommandFailed,
        (failed) => Ref.set(failedWith, failed.exitCode)
      )
    ),
    exitPolicy
  ).pipe(Effect.flatMap((code) => (code === EXIT_OK ? Ref.get(failedWith) : Effect.succeed(code))))
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: exitTeardown(exitPolicy)
})
