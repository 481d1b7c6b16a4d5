import { Cause, Data, Duration, Effect, Exit, Schedule } from "effect"

/**
 * The one way tests wait for state they cannot subscribe to (a lease released in the background,
 * an audit line that travels on another pipe than the response): retry an attempt on a
 * `Schedule` until it yields a value, bounded in time. Prefer a stream of state changes where
 * one exists; never write a polling loop of your own.
 *
 * The schedule sleeps on the Clock: under `it.effect` (TestClock) use `it.live`, or the Promise
 * form below, which runs on the live clock.
 */
export class NotReached extends Data.TaggedError("NotReached")<{
  readonly what: string
  readonly timeout: Duration.Duration
}> {
  override get message() {
    return `${this.what}: not reached in ${Duration.toMillis(this.timeout)} ms`
  }
}

/** A Promise attempt's rejection, carried through the Effect unchanged and rethrown as it was. */
class AttemptRejected extends Data.TaggedError("AttemptRejected")<{ readonly error: unknown }> {}

export interface EventuallyOptions {
  /** The whole wait, attempts included (default 30 s). */
  readonly timeout?: Duration.DurationInput
  /** Between attempts (default 50 ms). */
  readonly interval?: Duration.DurationInput
}

/**
 * `attempt` until it succeeds with a value other than `undefined`; NotReached once `timeout` has
 * passed. A failure of the attempt itself is not retried: it is the test's answer.
 */
export const eventually = <A, E, R>(
  what: string,
  attempt: Effect.Effect<A | undefined, E, R>,
  options: EventuallyOptions = {}
): Effect.Effect<A, E | NotReached, R> => {
  const timeout = Duration.decode(options.timeout ?? Duration.seconds(30))
  const notReached = new NotReached({ what, timeout })
  return attempt.pipe(
    Effect.flatMap((value) => (value === undefined ? Effect.fail(notReached) : Effect.succeed(value))),
    Effect.retry({
      schedule: Schedule.spaced(options.interval ?? Duration.millis(50)),
      while: (error) => error === notReached
    }),
    // One bound for everything, a hanging attempt included.
    Effect.timeoutFail({ duration: timeout, onTimeout: () => notReached })
  )
}

/**
 * The Promise form for the Promise-based suites: the same schedule, the attempt's own rejection
 * passed through unchanged (not wrapped), NotReached after the timeout.
 */
export const eventuallyAsync = async <A>(
  what: string,
  attempt: () => Promise<A | undefined> | A | undefined,
  timeoutMs = 30_000,
  intervalMs = 50
): Promise<A> => {
  const exit = await Effect.runPromiseExit(
    eventually(
      what,
      Effect.tryPromise({ try: async () => attempt(), catch: (error) => new AttemptRejected({ error }) }),
      { timeout: Duration.millis(timeoutMs), interval: Duration.millis(intervalMs) }
    )
  )
  if (Exit.isSuccess(exit)) return exit.value
  const error = Cause.squash(exit.cause)
  throw error instanceof AttemptRejected ? error.error : error
}
