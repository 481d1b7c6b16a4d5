import { Cause, Data, DateTime, Effect, Exit, Option } from "effect"
import {
  configurationErrorAuditLine,
  configurationErrorLine,
  configurationErrorsOf
} from "./ConfigurationError.js"

/**
 * The one exit-code mapping of the three ServerFS programs (serverfs-mcp, serverfs-bridge,
 * serverfs): 0 after success or a signal, 2 on a configuration error (the one
 * `ServerFS: configuration error: …` line, plus the JSON `startup_failed` line for the servers),
 * 1 for anything else. It lives here because all three programs depend on @serverfs/policy, which
 * owns ConfigurationError, and the CLI may reach nothing else but the RPC client and the domain.
 *
 * The mapping runs inside the program (`withExitCode`), so its timestamps come from the Clock;
 * `exitTeardown` only turns the resulting number into the process's exit.
 */
export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_CONFIGURATION = 2

export interface ProgramExit {
  /** The servers add the JSON `startup_failed` audit line after the human one (tool-contracts §7). */
  readonly auditConfigurationErrors: boolean
  /** What a program prints on stderr for any other failure before exiting with 1 (default: nothing). */
  readonly otherFailure?: (cause: Cause.Cause<unknown>, now: DateTime.Utc) => string | undefined
  /**
   * Exit the process even after success: the MCP SDK's stdin listener would otherwise keep an
   * idle process alive. Without it a successful program lets the event loop drain (the CLI).
   */
  readonly exitOnSuccess: boolean
  /** The exit code after SIGTERM/SIGINT: 0 for all three (a clean stop; for the CLI, e.g. ending `tasks events --follow`). */
  readonly interruptedExitCode: number
}

/**
 * A verdict a command has already printed, ending the program with its own exit code and no
 * further output (`serverfs doctor`: 1 for a WARN, 2 for a FAIL).
 */
export class ExitWithCode extends Data.TaggedError("ExitWithCode")<{ readonly code: number }> {}

const write = (text: string | undefined): Effect.Effect<void> =>
  text === undefined ? Effect.void : Effect.sync(() => void process.stderr.write(text))

/** The failure's stderr lines and exit code; success is 0, an interruption stays an interruption. */
export const withExitCode = <E, R>(
  program: Effect.Effect<unknown, E, R>,
  policy: ProgramExit
): Effect.Effect<number, never, R> =>
  program.pipe(
    Effect.as(EXIT_OK),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.gen(function* () {
            const widened: Cause.Cause<unknown> = cause
            const verdict = Option.filter(
              Cause.failureOption(widened),
              (e): e is ExitWithCode => e instanceof ExitWithCode
            )
            if (Option.isSome(verdict)) return verdict.value.code
            const now = yield* DateTime.now
            const errors = configurationErrorsOf(cause)
            if (errors.length > 0) {
              for (const error of errors) {
                yield* write(configurationErrorLine(error))
                if (policy.auditConfigurationErrors)
                  yield* write(configurationErrorAuditLine(error, DateTime.toDateUtc(now)))
              }
              return EXIT_CONFIGURATION
            }
            yield* write(policy.otherFailure?.(cause, now))
            return EXIT_FAILURE
          })
    )
  )

/**
 * NodeRuntime.runMain's teardown for a `withExitCode` program. runMain's Teardown is generic in
 * the program's result, so the code is read back from it: a `withExitCode` program only ever
 * succeeds with a number.
 */
export const exitTeardown =
  (policy: ProgramExit) =>
  <E, A>(exit: Exit.Exit<A, E>, onExit: (code: number) => void): void => {
    const code = Exit.isSuccess(exit)
      ? typeof exit.value === "number"
        ? exit.value
        : EXIT_OK
      : Cause.isInterruptedOnly(exit.cause)
        ? policy.interruptedExitCode
        : EXIT_FAILURE
    if (code === EXIT_OK && policy.exitOnSuccess) process.exit(EXIT_OK)
    else onExit(code)
  }
