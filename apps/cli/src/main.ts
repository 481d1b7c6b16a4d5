#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  Configuration,
  configurationErrorLine,
  configurationErrorOf,
  EnvironmentConfigProvider
} from "@serverfs/policy"
import { Effect, Exit, Layer, Option } from "effect"
import { runCli } from "./Cli.js"

/**
 * serverfs: the operator CLI. Exit codes: 0 ok, 2 configuration error (one line naming the
 * variable, as the servers print it), 1 anything else (including usage errors).
 */
const MainLive = Layer.mergeAll(
  NodeContext.layer,
  Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider(process.env)))
)

NodeRuntime.runMain(Effect.provide(runCli(process.argv), MainLive), {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(0)
    const config = configurationErrorOf(exit.cause)
    if (Option.isSome(config)) {
      process.stderr.write(configurationErrorLine(config.value))
      return onExit(2)
    }
    onExit(1)
  }
})
