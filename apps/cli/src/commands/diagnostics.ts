import { Command } from "@effect/cli"
import { CATALOG_VERSION } from "@serverfs/domain"
import { ExitWithCode } from "@serverfs/policy"
import { BridgeClient } from "@serverfs/rpc"
import { Console, Effect } from "effect"
import { callBridge, EXIT_BRIDGE_UNAVAILABLE, printJson, reportFailure } from "../output/Failure.js"
import { json } from "../output/JsonOption.js"
import { renderFlat, renderSnapshot } from "../render/DiagnosticsRender.js"
import { checkTaskId, taskIdArg } from "./TaskIdArg.js"

/**
 * `serverfs diagnostics snapshot|task` (spec v0.22 §8): the bridge's JSON as is. When the bridge
 * cannot be reached, `diagnostics task` answers the CLI's own disposition `bridge_unavailable`
 * (§8.2: the other three — available, unknown_task, not_retained — are the bridge's) and exits 3;
 * `diagnostics snapshot` has no disposition and fails AGENT_BRIDGE_UNAVAILABLE, also exit 3.
 */
const snapshot = Command.make("snapshot", { json }, (args) =>
  Effect.gen(function* () {
    const result = yield* callBridge("diagnostics.snapshot", {}, args.json)
    if (args.json) return yield* printJson(result)
    yield* Console.log(renderSnapshot(result))
  })
).pipe(Command.withDescription("The diagnostics recorder's bounded state."))

const task = Command.make("task", { taskId: taskIdArg, json }, (args) =>
  Effect.gen(function* () {
    const id = yield* checkTaskId(args.taskId, args.json)
    const client = yield* BridgeClient
    const result = yield* client.call("diagnostics.task", { task_id: id }).pipe(
      Effect.map((r): Record<string, unknown> => r),
      Effect.catchAll((failure) =>
        failure._tag === "AGENT_BRIDGE_UNAVAILABLE"
          ? Effect.succeed({
              catalog_version: CATALOG_VERSION,
              disposition: "bridge_unavailable",
              task_id: id
            })
          : reportFailure(args.json, failure)
      )
    )
    if (args.json) yield* printJson(result)
    else yield* Console.log(renderFlat(result))
    if (result.disposition === "bridge_unavailable")
      return yield* new ExitWithCode({ code: EXIT_BRIDGE_UNAVAILABLE })
  })
).pipe(Command.withDescription("One task's diagnostic trace (or why there is none)."))

export const diagnosticsCommand = Command.make("diagnostics").pipe(
  Command.withDescription("The bridge's bounded diagnostics (spec v0.22)."),
  Command.withSubcommands([snapshot, task])
)
