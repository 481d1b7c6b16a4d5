import {
  type AgentError,
  AgentProfileNotAllowed,
  AgentProviderDisconnected,
  AgentProviderError,
  AgentRuntimeNotReady,
  AgentSessionNotResumable,
  HostPathRedaction
} from "@serverfs/domain"
import { Deferred, type Duration, Effect, Exit, Queue, Scope } from "effect"
import type { TurnOutcome, TurnRequest, TurnSink } from "../ProviderAdapter.js"
import type { CodexCli, OwnedConnection } from "./CodexCli.js"
import {
  type AgentMessage,
  type CodexFileChange,
  finalTextOf,
  itemEvent,
  requestFailure,
  retainChanges,
  turnFailure
} from "./CodexMapping.js"
import { reattach } from "./CodexReattach.js"
import { attachAfterRestart, type RestartAttach } from "./CodexRestartAttach.js"
import { makeServerRequests } from "./CodexServerRequests.js"
import type { CodexConnection, Incoming, Notification, RequestError } from "./CodexTransport.js"
import { CONTINUE, type CodexTurns, type Signal } from "./CodexTurns.js"
import type { Turn } from "./protocol/generated/v2/index.js"

/**
 * One ServerFS task = one Codex turn (spec v0.3 §4.1, §8–§9, §17, §20): `thread/start {cwd,
 * serviceName}` (+ model only when the task names one) or `thread/resume` of the task it
 * continues, then `turn/start {threadId, input, cwd}` — native mode: no sandbox, approval
 * policy or config override. Progress is followed on the connection until `turn/completed`;
 * a lost daemon connection is re-attached (CodexReattach). Everything the run acquires (its
 * connection, its relays' interruption, the turn's interrupt when it may still run) is released
 * by the run's scope, in that order.
 */
export interface TurnDeps {
  readonly cli: CodexCli
  readonly turns: CodexTurns
  readonly transport: "daemon" | "stdio"
  readonly reconnectWindow: Duration.Duration
  readonly collaborationMode: "plan" | undefined
  /** The adapter's scope: the relays of a lost turn outlive the run (the bridge settles them). */
  readonly relayScope: Scope.Scope
}

const SERVICE_NAME = "serverfs-agent-bridge"
/** The bound of the stop signal's wait (see `ActiveTurn.stopSignalled`). */
const STOP_SIGNAL_BOUND = "10 seconds"
const FINAL_INTERRUPT = "5 seconds"

export const makeCodexRun =
  (deps: TurnDeps) =>
  (request: TurnRequest, sink: TurnSink, attach?: RestartAttach): Effect.Effect<TurnOutcome, AgentError> =>
    Effect.scoped(
      Effect.gen(function* () {
        if (request.profile !== "workspace-write") {
          return yield* new AgentProfileNotAllowed({
            message: "Codex runs in native mode only with the workspace-write profile"
          })
        }
        // Everything shown is redacted by the one rule (spec §16); every provider text that goes
        // into an AgentError passes `message` (the bridge's own pass comes on top).
        const redaction = new HostPathRedaction(request.workdirRoot)
        const failure = (what: string) => (e: RequestError) => requestFailure(redaction, what, e)

        const turn = yield* Effect.acquireRelease(deps.turns.begin(request.taskId), (turn) =>
          deps.turns.end(request.taskId, turn)
        )
        /** The connection the turn is followed on, in its own scope (replaced on reconnect). */
        const followed = yield* Effect.acquireRelease(
          // Interruptible (an acquire is not by default): a cancel during the connect or the
          // daemon's autostart stops it; openOwned releases what it had opened.
          // A turn of a previous process is only followed on the daemon that runs it: never autostarted.
          Effect.interruptible(
            deps.cli.openOwned(attach === undefined ? deps.cli.connectForTask : deps.cli.connect)
          ).pipe(
            Effect.map((current): { current: OwnedConnection } => ({ current })),
            Effect.mapError((e) => new AgentRuntimeNotReady({ message: redaction.message(e.reason) }))
          ),
          (owned) => Scope.close(owned.current.scope, Exit.void)
        )
        turn.connection = followed.current.connection
        const connection = (): CodexConnection => followed.current.connection

        // The thread: new, or the recorded one of the task this one continues.
        let threadModel: string
        if (request.resume === null) {
          const started = yield* connection()
            .request("thread/start", {
              cwd: request.cwd,
              serviceName: SERVICE_NAME,
              ...(request.model === null ? {} : { model: request.model })
            })
            .pipe(Effect.mapError(failure("thread/start")))
          turn.threadId = started.thread.id
          threadModel = started.model
        } else {
          const sessionId = request.resume.sessionId
          const resumed = yield* connection()
            .request("thread/resume", {
              threadId: sessionId,
              excludeTurns: true,
              ...(request.model === null ? {} : { model: request.model })
            })
            .pipe(
              Effect.mapError((e) =>
                e._tag === "CodexRpcError"
                  ? new AgentSessionNotResumable({
                      message: redaction.message(`the Codex thread cannot be resumed: ${e.message}`)
                    })
                  : failure("thread/resume")(e)
              )
            )
          if (resumed.thread.id !== sessionId) {
            return yield* new AgentSessionNotResumable({ message: "Codex resumed a different thread" })
          }
          turn.threadId = resumed.thread.id
          threadModel = resumed.model
        }
        const threadId = turn.threadId
        yield* sink.nativeIds({ sessionId: threadId })

        const fileChanges = new Map<string, ReadonlyArray<CodexFileChange>>()
        const requests = makeServerRequests({
          turn,
          threadId,
          sink,
          redaction,
          fileChanges,
          relayScope: deps.relayScope
        })
        // Released before the connection: relays still waiting are stopped (their requests go stale).
        yield* Effect.addFinalizer(() => requests.interruptAll)

        // A restart's re-attach follows the recorded turn (CodexRestartAttach): no turn/start.
        if (attach === undefined) deps.turns.remember(request.taskId, "turn-sent")
        const started =
          attach !== undefined
            ? { turn: { id: attach.turnId } }
            : yield* connection()
                .request("turn/start", {
                  threadId,
                  input: [{ type: "text", text: request.prompt, text_elements: [] }],
                  cwd: request.cwd,
                  ...(deps.collaborationMode === "plan"
                    ? {
                        collaborationMode: {
                          mode: "plan",
                          settings: {
                            model: threadModel,
                            reasoning_effort: null,
                            developer_instructions: null
                          }
                        }
                      }
                    : {})
                })
                .pipe(Effect.mapError(failure("turn/start")))
        const turnId = started.turn.id
        turn.turnId = turnId
        // Released first: a turn that may still run is asked to stop (bounded, best effort).
        yield* Effect.addFinalizer(() =>
          turn.done || turn.lost || turn.connection?.isOpen() !== true
            ? Effect.void
            : turn.connection
                .request("turn/interrupt", { threadId, turnId })
                .pipe(Effect.timeout(FINAL_INTERRUPT), Effect.ignore)
        )
        if (attach === undefined) {
          yield* sink.nativeIds({ turnId })
          yield* sink.event("turn.started", request.resume === null ? {} : { continued: true })
        }
        if (turn.cancelRequested) {
          yield* connection().request("turn/interrupt", { threadId, turnId }).pipe(Effect.ignore)
        }

        // ---- notifications --------------------------------------------------------------------
        const messages: Array<AgentMessage> = []
        let lastError: string | null = null
        const onNotification = (n: Notification): Effect.Effect<Signal> =>
          Effect.gen(function* () {
            switch (n.method) {
              case "turn/completed":
                return n.params.threadId === threadId && n.params.turn.id === turnId
                  ? ({ _tag: "completed", turn: n.params.turn } as const)
                  : CONTINUE
              case "item/started":
              case "item/completed": {
                if (n.params.threadId !== threadId || n.params.turnId !== turnId) return CONTINUE
                const item = n.params.item
                // The changes are kept (bounded) until the item completes: its approval shows them.
                if (item.type === "fileChange") {
                  if (n.method === "item/started") fileChanges.set(item.id, retainChanges(item.changes))
                  else fileChanges.delete(item.id)
                }
                if (item.type === "agentMessage" && n.method === "item/completed") {
                  messages.push({ id: item.id, text: item.text, phase: item.phase })
                }
                const event = itemEvent(
                  item,
                  n.method === "item/started" ? "started" : "completed",
                  redaction
                )
                if (event !== undefined) yield* sink.event(event.type, event.payload)
                return CONTINUE
              }
              case "error":
                if (n.params.threadId !== threadId || n.params.turnId !== turnId) return CONTINUE
                lastError = n.params.error.message
                yield* sink.event("provider.error", {
                  message: redaction.message(n.params.error.message),
                  will_retry: n.params.willRetry
                })
                return CONTINUE
              case "serverRequest/resolved":
                if (n.params.threadId === threadId) yield* requests.onResolved(n.params.requestId)
                return CONTINUE
              default:
                return CONTINUE
            }
          })

        const dispatch = (incoming: Incoming, on: CodexConnection): Effect.Effect<Signal> => {
          switch (incoming._tag) {
            case "Closed":
              return Effect.succeed({ _tag: "closed", reason: incoming.reason })
            case "ServerRequest":
              return Effect.as(requests.onServerRequest(incoming.message, on), CONTINUE)
            case "Notification":
              return onNotification(incoming.message)
            case "Malformed":
              return incoming.id === undefined
                ? Effect.succeed({ _tag: "malformed", method: incoming.method })
                : requests
                    .decline(incoming.method, "ServerFS could not read the request", incoming.id, on)
                    .pipe(Effect.as(CONTINUE))
          }
        }

        // ---- the loop -------------------------------------------------------------------------
        const queued: Array<Signal> =
          attach === undefined
            ? []
            : [
                ...(yield* attachAfterRestart({
                  attach,
                  turn,
                  sink,
                  connection: connection(),
                  threadId,
                  dispatch
                }))
              ]
        let outcome: Turn | undefined
        while (outcome === undefined) {
          const on = connection()
          const signal = queued.shift() ?? (yield* dispatch(yield* Queue.take(on.incoming), on))
          if (signal._tag === "completed") outcome = signal.turn
          else if (signal._tag === "malformed") {
            return yield* new AgentProviderError({
              message: `Codex sent a ${signal.method} notification ServerFS could not read`
            })
          } else if (signal._tag === "closed") {
            if (deps.transport !== "daemon") {
              return yield* new AgentProviderDisconnected({
                message: "the codex app-server child exited during the turn"
              })
            }
            queued.push(
              ...(yield* reattach({
                cli: deps.cli,
                turn,
                sink,
                threadId,
                turnId,
                window: deps.reconnectWindow,
                followed,
                dispatch,
                dropUnreplayed: requests.dropUnreplayed
              }))
            )
          }
        }
        turn.done = true
        for (const item of outcome.items) {
          if (item.type === "agentMessage" && !messages.some((m) => m.id === item.id)) {
            messages.push({ id: item.id, text: item.text, phase: item.phase })
          }
        }
        switch (outcome.status) {
          case "completed":
            return { finalText: finalTextOf(messages) }
          case "interrupted":
            if (turn.cancelRequested) {
              // ServerFS stopped the turn. The bridge commits the task's end before it tells the
              // provider to stop; wait for that signal so this failure cannot overtake the
              // decision and mark the task failed (bounded, for a stop no cancel follows).
              yield* sink.event("turn.interrupted", { requested_by: "serverfs" })
              yield* Deferred.await(turn.stopSignalled).pipe(Effect.timeout(STOP_SIGNAL_BOUND), Effect.ignore)
              return yield* new AgentProviderError({
                message: "the turn was interrupted at ServerFS's request"
              })
            }
            return yield* new AgentProviderError({ message: "the Codex turn was interrupted" })
          case "failed":
            return yield* turnFailure(
              redaction,
              outcome.error?.message ?? lastError ?? "the Codex turn failed"
            )
          case "inProgress":
            return yield* new AgentProviderError({
              message: "Codex reported an unfinished turn as completed"
            })
        }
      })
    )
