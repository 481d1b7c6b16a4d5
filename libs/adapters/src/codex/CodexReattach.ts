import { AgentProviderDisconnected } from "@serverfs/domain"
import { Duration, Effect, Exit, Queue, Schedule, Scope } from "effect"
import type { TurnSink } from "../ProviderAdapter.js"
import type { CodexCli, OwnedConnection } from "./CodexCli.js"
import type { CodexConnection, Incoming } from "./CodexTransport.js"
import type { ActiveTurn, Signal } from "./CodexTurns.js"

/**
 * A lost daemon connection during a turn (spec v0.3 §28): reconnect within the window, resume
 * the thread and look at the turn — still running → re-attached (requests Codex replays keep
 * their ServerFS request; ones it does not replay were withdrawn); completed meanwhile → that
 * outcome; anything else → the turn is lost and its pending request left for the bridge.
 */
export interface Reattach {
  readonly cli: CodexCli
  readonly turn: ActiveTurn
  readonly sink: TurnSink
  readonly threadId: string
  readonly turnId: string
  readonly window: Duration.Duration
  /** The followed connection; replaced here. */
  readonly followed: { current: OwnedConnection }
  readonly dispatch: (incoming: Incoming, on: CodexConnection) => Effect.Effect<Signal>
  readonly dropUnreplayed: (current: CodexConnection) => Effect.Effect<void>
}

/** 200 ms doubling to at most 2 s between attempts, for at most the window. */
const reconnecting = (window: Duration.Duration) =>
  Schedule.exponential("200 millis").pipe(
    Schedule.either(Schedule.spaced("2 seconds")),
    Schedule.upTo(window)
  )

export const reattach = (r: Reattach): Effect.Effect<ReadonlyArray<Signal>, AgentProviderDisconnected> =>
  Effect.gen(function* () {
    yield* r.sink.event("provider.disconnected", { reconnecting: true })
    /** The turn cannot be followed any more: its pending request is left for the bridge. */
    const lostTurn = (detail: string) =>
      Effect.zipRight(
        Effect.sync(() => {
          r.turn.lost = true
        }),
        Effect.fail(new AgentProviderDisconnected({ message: detail }))
      )
    const opened = yield* r.cli.openOwned(r.cli.connect).pipe(
      Effect.retry(reconnecting(r.window)),
      Effect.catchTag("CodexUnavailable", () =>
        lostTurn("the Codex daemon could not be reached again during the turn")
      )
    )
    const previous = r.followed.current
    r.followed.current = opened
    r.turn.connection = opened.connection
    yield* Scope.close(previous.scope, Exit.void)
    const connection = opened.connection
    const read = yield* connection
      .request("thread/resume", { threadId: r.threadId, excludeTurns: true })
      .pipe(
        Effect.zipRight(connection.request("thread/read", { threadId: r.threadId, includeTurns: true })),
        Effect.catchAll(() => lostTurn("the Codex thread could not be resumed after a reconnect"))
      )
    const ours = read.thread.turns.find((t) => t.id === r.turnId)
    if (ours === undefined || ours.status === "interrupted" || ours.status === "failed") {
      return yield* lostTurn(
        `the Codex daemon lost the turn while ServerFS was disconnected (it is ${ours?.status ?? "gone"})`
      )
    }
    if (ours.status === "completed") return [{ _tag: "completed", turn: ours } satisfies Signal]
    // Replays arrive while the thread resumes: handle what came so far, then drop the rest.
    const early: Array<Signal> = []
    for (const incoming of yield* Queue.takeAll(connection.incoming)) {
      const signal = yield* r.dispatch(incoming, connection)
      if (signal._tag !== "continue") early.push(signal)
    }
    yield* r.dropUnreplayed(connection)
    yield* r.sink.event("provider.reattached", {})
    return early
  })

export const reconnectWindow = (seconds: number | undefined): Duration.Duration =>
  Duration.seconds(seconds ?? 30)
