/**
 * The one wait of the test support for state outside this process (a bridge child's tasks,
 * files, locks): retry a probe on a Schedule until it yields a value, bounded in time. State
 * inside this process is awaited on the bridge's status feed instead (statusWait.ts).
 */
import { Data, type Duration, Effect, Option, Schedule } from "effect"

class NotYet extends Data.TaggedError("NotYet") {}

export class TimedOut extends Data.TaggedError("TimedOut")<{ readonly what: string }> {
  override get message() {
    return `timed out waiting for ${this.what}`
  }
}

export const eventually = <A, E, R>(
  what: string,
  probe: Effect.Effect<Option.Option<A>, E, R>,
  options: { readonly timeout?: Duration.DurationInput; readonly interval?: Duration.DurationInput } = {}
): Effect.Effect<A, E | TimedOut, R> =>
  Effect.flatMap(
    probe,
    Option.match({ onNone: () => Effect.fail(new NotYet()), onSome: Effect.succeed })
  ).pipe(
    Effect.retry({
      schedule: Schedule.spaced(options.interval ?? "25 millis"),
      while: (e) => e instanceof NotYet
    }),
    Effect.catchTag("NotYet", () => Effect.dieMessage("unreachable: NotYet is retried")),
    Effect.timeoutFail({ duration: options.timeout ?? "30 seconds", onTimeout: () => new TimedOut({ what }) })
  )
