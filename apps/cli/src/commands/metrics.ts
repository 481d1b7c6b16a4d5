import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { callBridge, printJson } from "../output/Failure.js"
import { json } from "../output/JsonOption.js"
import { Style } from "../output/Style.js"
import { renderMetrics } from "../render/MetricsRender.js"

/**
 * `serverfs metrics`: the bridge's process-local metrics (metrics.snapshot) — the bridge's JSON
 * as is with `--json`, an aligned table otherwise. Every label value comes from a closed
 * vocabulary on the bridge's side, so nothing here can carry a task's text.
 */
export const metricsCommand = Command.make("metrics", { json }, (args) =>
  Effect.gen(function* () {
    const result = yield* callBridge("metrics.snapshot", {}, args.json)
    if (args.json) return yield* printJson(result)
    yield* Console.log(renderMetrics(yield* Style, result))
  })
).pipe(
  Command.withDescription("The bridge's metrics since it started: task outcomes, queue, leases, RPC calls.")
)
