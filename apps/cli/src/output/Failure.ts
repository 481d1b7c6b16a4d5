import type { BridgeMethod, MethodParams, MethodResult } from "@serverfs/domain"
import { ExitWithCode } from "@serverfs/policy"
import { BridgeClient } from "@serverfs/rpc"
import { Console, Effect } from "effect"
import { printable } from "./Table.js"

/**
 * How an operator command fails (main.ts documents the codes): the command prints the failure
 * itself — one `serverfs: CODE: message` line on stderr, or `{"error":{"code","message"}}` on
 * stdout with `--json` — and then ends the program with its exit code (ExitWithCode, the
 * programs' one exit mapping in libs/policy): 3 when the bridge cannot be reached
 * (AGENT_BRIDGE_UNAVAILABLE), 1 for anything else.
 */
export const EXIT_ERROR = 1
export const EXIT_BRIDGE_UNAVAILABLE = 3

/** A failure already printed: the program ends with its code. */
export type CommandFailed = ExitWithCode

/** A failure with a frozen code: the bridge's, the client's, or one the CLI constructs. */
export interface CodedFailure {
  readonly _tag: string
  readonly message: string
}

export const exitCodeOf = (failure: CodedFailure): number =>
  failure._tag === "AGENT_BRIDGE_UNAVAILABLE" ? EXIT_BRIDGE_UNAVAILABLE : EXIT_ERROR

/** Print the failure in the command's output mode; then fail with its exit code. */
export const reportFailure = (json: boolean, failure: CodedFailure): Effect.Effect<never, CommandFailed> =>
  Effect.zipRight(
    json
      ? Console.log(JSON.stringify({ error: { code: failure._tag, message: failure.message } }))
      : Console.error(`serverfs: ${failure._tag}: ${printable(failure.message)}`),
    new ExitWithCode({ code: exitCodeOf(failure) })
  )

/** One bridge call; its failure printed and turned into CommandFailed. */
export const callBridge = <M extends BridgeMethod>(
  method: M,
  params: MethodParams<M>,
  json: boolean
): Effect.Effect<MethodResult<M>, CommandFailed, BridgeClient> =>
  Effect.flatMap(BridgeClient, (client) => client.call(method, params)).pipe(
    Effect.catchAll((failure) => reportFailure(json, failure))
  )

/** The JSON contract's one document. */
export const printJson = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, null, 2))
