import { Data, type Duration, Effect, Option, Schedule } from "effect"

/** What `eventually` waited for never came. */
export class TimedOut extends Data.TaggedError("TimedOut")<{ readonly message: string }> {}

/**
 * The adapter tests' one wait: `probe` until it yields a value, retried on a `Schedule` (on the
 * Clock) for at most `timeout`; then a failure naming what never came. What is probed here is
 * outside any Effect stream (a process table, a fake server's log), so it cannot be subscribed.
 */
export const eventually = <A>(
  what: string,
  probe: Effect.Effect<A | undefined>,
  timeout: Duration.DurationInput = "30 seconds",
  spacing: Duration.DurationInput = "25 millis"
): Effect.Effect<A, TimedOut> =>
  probe.pipe(
    Effect.flatMap((value) => (value === undefined ? Effect.fail(Option.none()) : Effect.succeed(value))),
    Effect.retry(Schedule.spaced(spacing).pipe(Schedule.upTo(timeout))),
    Effect.mapError(() => new TimedOut({ message: `timed out waiting for ${what}` }))
  )

/** `eventually` for Promise-based tests. */
export const eventuallyPromise = <A>(
  what: string,
  probe: () => A | undefined | Promise<A | undefined>,
  timeout?: Duration.DurationInput,
  spacing?: Duration.DurationInput
): Promise<A> =>
  Effect.runPromise(
    eventually(
      what,
      Effect.promise(async () => probe()),
      timeout,
      spacing
    )
  )
