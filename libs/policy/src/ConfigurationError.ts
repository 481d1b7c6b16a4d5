import { Cause, Data, Option } from "effect"

/**
 * A configuration value the server refuses to start with. The process prints one line,
 * `ServerFS: configuration error: <VARIABLE>: <problem>`, and the servers add one `startup_failed`
 * audit line naming the variable; they exit with code 2. The problem text never repeats the value
 * (it may be a host path or a secret).
 */
export class ConfigurationError extends Data.TaggedError("ConfigurationError")<{
  readonly variable: string
  readonly problem: string
}> {
  override get message() {
    return `${this.variable}: ${this.problem}`
  }
}

/**
 * Every configuration error at once (`serverfs config check`, which has already shown the rest of
 * its report): the exit mapping prints one line per error, in order, and exits with code 2.
 */
export class ConfigurationErrors extends Data.TaggedError("ConfigurationErrors")<{
  readonly errors: ReadonlyArray<ConfigurationError>
}> {}

/** The configuration error that stopped a program, if that is what stopped it. */
export const configurationErrorOf = (cause: Cause.Cause<unknown>): Option.Option<ConfigurationError> =>
  Cause.failureOption(cause).pipe(
    Option.filter((e): e is ConfigurationError => e instanceof ConfigurationError)
  )

/** The configuration errors that stopped a program: one, several, or none. */
export const configurationErrorsOf = (cause: Cause.Cause<unknown>): ReadonlyArray<ConfigurationError> =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => [],
    onSome: (e) => (e instanceof ConfigurationError ? [e] : e instanceof ConfigurationErrors ? e.errors : [])
  })

/** The one stderr line every ServerFS program prints before exiting with code 2. */
export const configurationErrorLine = (error: ConfigurationError): string =>
  `ServerFS: configuration error: ${error.message}\n`

/**
 * The `startup_failed` audit line (tool-contracts §7) serverfs-mcp and serverfs-bridge write after
 * the human line, so a log collector that keeps only JSON lines still sees why the process
 * stopped. Only the variable's name: the problem text is for people, and the value never appears.
 */
export const configurationErrorAuditLine = (error: ConfigurationError, now: Date): string =>
  `${JSON.stringify({
    timestamp: now.toISOString(),
    level: "ERROR",
    event: "startup_failed",
    reason: "configuration error",
    variable: error.variable
  })}\n`
