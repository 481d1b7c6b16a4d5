import {
  type ConfigurationError,
  configurationErrorOf,
  EXIT_CONFIGURATION,
  type ProgramExit,
  withExitCode
} from "@serverfs/policy"
import { Duration, Effect, Option, Ref, Schema } from "effect"

/**
 * A client that spawns serverfs-mcp over stdio sees only "connection closed" when the server
 * stops on a configuration error: the reason goes to stderr, which most clients hide. So, after
 * the documented stderr lines and before the exit with code 2, the server answers the client's
 * first request (its `initialize`) with a JSON-RPC error whose message is the one configuration
 * line. Nothing is served: no initialize result, no tool list — the server never runs
 * half-configured. The line names the variable and the problem, never the value (a host path or
 * a secret stays out of it, as on stderr).
 *
 * Bounded: the wait ends at stdin EOF, after the first request, after REPLY_WAIT, or when the
 * input exceeds MAX_INPUT_BYTES without a request; a terminal on stdin is not waited for at all.
 */
const REPLY_WAIT = Duration.seconds(5)
const MAX_INPUT_BYTES = 1024 * 1024

/** JSON-RPC's "server error" range: the request was well formed, the server cannot serve it. */
export const CONFIGURATION_ERROR_RPC_CODE = -32000

const Request = Schema.parseJson(
  Schema.Struct({
    jsonrpc: Schema.Literal("2.0"),
    id: Schema.Union(Schema.String, Schema.Number),
    method: Schema.String
  })
)
const decodeRequest = Schema.decodeUnknownOption(Request)

/** The id of the first JSON-RPC request (a line with an id) on stdin, if one comes in time. */
const firstRequestId: Effect.Effect<Option.Option<string | number>> = Effect.async<
  Option.Option<string | number>
>((resume) => {
  const input = process.stdin
  let pending = ""
  let seen = 0
  const finish = (id: Option.Option<string | number>) => {
    detach()
    resume(Effect.succeed(id))
  }
  const onData = (chunk: Buffer) => {
    seen += chunk.length
    pending += chunk.toString("utf8")
    let newline = pending.indexOf("\n")
    while (newline !== -1) {
      const request = decodeRequest(pending.slice(0, newline))
      if (Option.isSome(request)) return finish(Option.some(request.value.id))
      pending = pending.slice(newline + 1)
      newline = pending.indexOf("\n")
    }
    if (seen > MAX_INPUT_BYTES) finish(Option.none())
  }
  const onEnd = () => finish(Option.none())
  const detach = () => {
    input.off("data", onData)
    input.off("end", onEnd)
    input.off("close", onEnd)
    input.off("error", onEnd)
    input.pause()
  }
  input.on("data", onData)
  input.once("end", onEnd)
  input.once("close", onEnd)
  input.once("error", onEnd)
  return Effect.sync(detach)
})

/** The JSON-RPC error frame carrying the configuration line(s), without the trailing newline. */
export const configurationErrorReply = (
  id: string | number,
  errors: ReadonlyArray<ConfigurationError>
): string =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    error: {
      code: CONFIGURATION_ERROR_RPC_CODE,
      message: errors.map((e) => `ServerFS: configuration error: ${e.message}`).join("; ")
    }
  })

const replyToClient = (errors: ReadonlyArray<ConfigurationError>): Effect.Effect<void> =>
  process.stdin.isTTY === true || errors.length === 0
    ? Effect.void
    : firstRequestId.pipe(
        Effect.timeoutTo({
          duration: REPLY_WAIT,
          onSuccess: (id) => id,
          onTimeout: () => Option.none<string | number>()
        }),
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.void,
            onSome: (id) =>
              // Resolves once the frame is handed to the pipe, so the exit cannot cut it off.
              Effect.async<void>((resume) => {
                process.stdout.write(`${configurationErrorReply(id, errors)}\n`, () => resume(Effect.void))
              })
          })
        )
      )

/**
 * `withExitCode` for serverfs-mcp over stdio: the same exit codes and stderr lines, and on a
 * configuration error the client's first request is answered with that error before the exit.
 */
export const withClientVisibleExitCode = <E, R>(
  program: Effect.Effect<unknown, E, R>,
  policy: ProgramExit
): Effect.Effect<number, never, R> =>
  Effect.gen(function* () {
    const failure = yield* Ref.make<ReadonlyArray<ConfigurationError>>([])
    const code = yield* withExitCode(
      program.pipe(
        Effect.tapErrorCause((cause) => Ref.set(failure, Option.toArray(configurationErrorOf(cause))))
      ),
      policy
    )
    if (code === EXIT_CONFIGURATION) yield* replyToClient(yield* Ref.get(failure))
    return code
  })
