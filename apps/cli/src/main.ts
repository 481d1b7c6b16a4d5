#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  Configuration,
  EnvironmentConfigProvider,
  exitTeardown,
  type ProgramExit,
  withExitCode
} from "@serverfs/policy"
import { Effect, Layer } from "effect"
import { runCli } from "./Cli.js"

/**
 * serverfs: the operator CLI. Exit codes: 0 ok, 2 configuration error (one line naming the
 * variable, as the servers print it), 1 anything else (including usage errors).
 */
const MainLive = Layer.mergeAll(
  NodeContext.layer,
  Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider(process.env)))
)

const exitPolicy: ProgramExit = {
  auditConfigurationErrors: false,
  exitOnSuccess: false,
  interruptedExitCode: 1
}

NodeRuntime.runMain(withExitCode(Effect.provide(runCli(process.argv), MainLive), exitPolicy), {
  disableErrorReporting: true,
  teardown: exitTeardown(exitPolicy)
})
