import {
  type AgentError,
  AgentProviderDisconnected,
  AgentProviderError,
  type InFlightRecovery
} from "@serverfs/domain"
import { Effect, Queue } from "effect"
import type { AttachProof, ReattachRequest, TurnOutcome, TurnRequest, TurnSink } from "../ProviderAdapter.js"
import type { CodexConnection, Incoming } from "./CodexTransport.js"
import type { ActiveTurn, Signal } from "./CodexTurns.js"

/** What the bridge gives a re-attach after its restart (`ProviderAdapter.reattach`). */
export interface RestartAttach {
  readonly turnId: string
  readonly confirm: (proof: AttachProof) => Effect.Effect<boolean>
}

/**
 * A turn a previous bridge process started, found again on the managed daemon (spec v0.7 §2.3:
 * REATTACHED only with live proof that the exact native turn still runs). The run has already
 * sent `thread/resume` on a fresh connection; the daemon replays the turn's pending server
 * requests before answering it (as after a dropped connection, CodexReattach). Here:
 * `thread/read {includeTurns}` — the recorded turn must be `inProgress` — then the replays that
 * arrived are dispatched (each reaches the sink, which re-binds it to the stored ServerFS request
 * or refuses it), and the bridge confirms. Anything else fails: the run's finalizer then asks
 * Codex to stop the turn, and the bridge interrupts the task.
 */
export const attachAfterRestart = (a: {
  readonly attach: RestartAttach
  readonly turn: ActiveTurn
  readonly sink: TurnSink
  readonly connection: CodexConnection
  readonly threadId: string
  readonly dispatch: (incoming: Incoming, on: CodexConnection) => Effect.Effect<Signal>
}): Effect.Effect<ReadonlyArray<Signal>, AgentError> =>
  Effect.gen(function* () {
    const notAttached = (detail: string) => Effect.fail(new AgentProviderDisconnected({ message: detail }))
    const read = yield* a.connection
      .request("thread/read", { threadId: a.threadId, includeTurns: true })
      .pipe(Effect.catchAll(() => notAttached("the Codex thread could not be read after the restart")))
    const ours = read.thread.turns.find((t) => t.id === a.attach.turnId)
    if (ours?.status !== "inProgress") {
      return yield* notAttached(
        `the Codex turn did not survive the restart (it is ${ours?.status ?? "gone"})`
      )
    }
    // Replays arrive while the thread resumes, before thread/read answers: all of them are here.
    const early: Array<Signal> = []
    let replayed = 0
    for (const incoming of yield* Queue.takeAll(a.connection.incoming)) {
      if (incoming._tag === "ServerRequest") replayed += 1
      const signal = yield* a.dispatch(incoming, a.connection)
      if (signal._tag !== "continue") early.push(signal)
    }
    // Set before asking: the bridge's reconcile, right after its confirmation, reads it.
    a.turn.reattached = true
    if (!(yield* a.attach.confirm({ replayed }))) {
      a.turn.reattached = false
      return yield* new AgentProviderError({ message: "the bridge could not re-attach the turn safely" })
    }
    yield* a.sink.event("provider.reattached", { after: "bridge_restart" })
    return early
  })

/**
 * What `list_agent_runtimes` and the manifest say: the daemon keeps a turn (and its pending
 * request) across a bridge restart, and the adapter re-attaches it; a stdio child dies with the
 * bridge, so only the session can be continued.
 */
export const codexInFlightRecovery = (transport: "daemon" | "stdio"): InFlightRecovery =>
  transport === "daemon" ? "native" : "session-resume"

/** `ProviderAdapter.reattach` for Codex: the run, resuming the recorded thread, without turn/start. */
export const makeCodexRestartReattach =
  (
    transport: "daemon" | "stdio",
    run: (
      request: TurnRequest,
      sink: TurnSink,
      attach?: RestartAttach
    ) => Effect.Effect<TurnOutcome, AgentError>
  ) =>
  (
    request: ReattachRequest,
    sink: TurnSink,
    confirm: (proof: AttachProof) => Effect.Effect<boolean>
  ): Effect.Effect<TurnOutcome, AgentError> =>
    transport !== "daemon"
      ? Effect.fail(
          new AgentProviderDisconnected({ message: "a stdio Codex child does not outlive the bridge" })
        )
      : run(
          {
            taskId: request.taskId,
            cwd: request.cwd,
            workdirRoot: request.workdirRoot,
            prompt: "",
            profile: "workspace-write",
            model: null,
            resume: { sessionId: request.sessionId }
          },
          sink,
          { turnId: request.turnId, confirm }
        )
