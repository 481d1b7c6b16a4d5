import { Args, Command, Options } from "@effect/cli"
import { WorkdirNotFound } from "@serverfs/domain"
import { Configuration, SLOT_COUNT } from "@serverfs/policy"
import { Console, Effect } from "effect"
import { type CommandFailed, callBridge, printJson, reportFailure } from "../output/Failure.js"
import { json } from "../output/JsonOption.js"
import { Style } from "../output/Style.js"
import { renderRecover } from "../render/LeaseRender.js"

/**
 * `serverfs recover SLOT [--force]` (lease.recover): the supported way to clear a recovery guard.
 * SLOT is a slot number (`1` or `01`) or a workdir alias from the configuration; the bridge
 * does the rest under the slot's lease (refused while a live writer holds it).
 */
const slot = Args.text({ name: "SLOT" }).pipe(Args.withDescription("Slot number (1, 01) or workdir alias."))
const force = Options.boolean("force").pipe(
  Options.withDescription(
    "Clear the guard even though its run cannot be proven stopped (check it yourself first)."
  )
)

const resolveSlot = (text: string, jsonMode: boolean): Effect.Effect<number, CommandFailed, Configuration> =>
  Effect.gen(function* () {
    if (/^\d{1,2}$/.test(text)) {
      const n = Number(text)
      if (n >= 1 && n <= SLOT_COUNT) return n
    }
    const { workdirs } = yield* Configuration
    const byAlias = workdirs.find((w) => w.alias === text)
    if (byAlias !== undefined) return byAlias.slot
    return yield* reportFailure(jsonMode, new WorkdirNotFound({ workdir: text.slice(0, 64) }))
  })

export const recoverCommand = Command.make("recover", { slot, force, json }, (args) =>
  Effect.gen(function* () {
    const n = yield* resolveSlot(args.slot, args.json)
    const result = yield* callBridge("lease.recover", { slot: n, force: args.force }, args.json)
    if (args.json) return yield* printJson(result)
    yield* Console.log(renderRecover(yield* Style, result))
  })
).pipe(
  Command.withDescription("Reconcile a workdir's recovery guard (refused while a writer holds the lease).")
)
