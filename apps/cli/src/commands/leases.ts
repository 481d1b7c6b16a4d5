import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { callBridge, printJson } from "../output/Failure.js"
import { json } from "../output/JsonOption.js"
import { Style } from "../output/Style.js"
import { renderLeases } from "../render/LeaseRender.js"

/** `serverfs leases`: each read-write workdir's writer lease and recovery guard (lease.list). */
export const leasesCommand = Command.make("leases", { json }, (args) =>
  Effect.gen(function* () {
    const result = yield* callBridge("lease.list", {}, args.json)
    if (args.json) return yield* printJson(result)
    yield* Console.log(renderLeases(yield* Style, result))
  })
).pipe(Command.withDescription("Each read-write workdir: lease free/held (by which task), recovery guard."))
