import { isFrozenError, type LeaseOutcome, WorkdirBusy, WorkdirRecoveryRequired } from "@serverfs/domain"
import type { RpcOutcome } from "@serverfs/telemetry-local"
import { Cause, Exit, Option } from "effect"

/**
 * The bounded outcomes the bridge's observations derive from an exit — each classified ONCE, at
 * the seam, and then handed to the metric and the recorder alike (spec v0.22 §9.1: the
 * diagnostic and the metric lease outcome come from the same caught/success condition).
 */

/** A failure the exit carries (the first), if it failed with one rather than a defect or an interruption. */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): Option.Option<E> =>
  Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()

/**
 * A writer-lease acquisition (the flock plus the reconcile of a guard it found): acquired,
 * busy (a live writer: a rejection, never lease-wait latency), recovery_required (a guard that
 * cannot be cleared), failure (anything else, an interruption included).
 */
export const leaseOutcomeOf = <A, E>(exit: Exit.Exit<A, E>): LeaseOutcome => {
  if (Exit.isSuccess(exit)) return "acquired"
  return Option.match(failureOf(exit), {
    onNone: () => "failure",
    onSome: (error) =>
      error instanceof WorkdirBusy
        ? "busy"
        : error instanceof WorkdirRecoveryRequired
          ? "recovery_required"
          : "failure"
  })
}

/** An RPC call: ok, the frozen code it failed with (its class's tag), or fault (a defect, an interruption). */
export const rpcOutcomeOf = <A, E>(exit: Exit.Exit<A, E>): RpcOutcome => {
  if (Exit.isSuccess(exit)) return "ok"
  return Option.match(failureOf(exit), {
    onNone: () => "fault",
    onSome: (error) => (isFrozenError(error) ? error._tag : "fault")
  })
}
