import type * as net from "node:net"
import { type AgentError, AgentProviderError, AgentTaskNotActive } from "@serverfs/domain"
import { type Config, Deferred, Effect, Layer } from "effect"
import { type ProviderAdapter, ProviderAdapterTag } from "../ProviderAdapter.js"
import { makeCodexCli } from "./CodexCli.js"
import { makeCodexListModels } from "./CodexModels.js"
import { makeCodexProbe } from "./CodexProbe.js"
import { reconnectWindow } from "./CodexReattach.js"
import { makeCodexReconcile } from "./CodexReconcile.js"
import { codexInFlightRecovery, makeCodexRestartReattach } from "./CodexRestartAttach.js"
import { makeCodexRun } from "./CodexTurn.js"
import { makeCodexTurns } from "./CodexTurns.js"

/**
 * The Codex runtime (spec v0.3 §4.1, §8, §9, §17, §20, §33; bridge-internals §7, §10): one
 * ServerFS task = one Codex turn, driven over the official App Server protocol through
 * `CodexTransport` (the managed daemon's control socket, or a stdio child). Split along the
 * protocol: CodexCli (CLI and daemon lifecycle), CodexProbe, CodexTurn (the turn),
 * CodexServerRequests (approvals and questions), CodexReattach (a lost daemon connection),
 * CodexReconcile and CodexRestartAttach (after a bridge restart). This file assembles them, with steer and cancel.
 *
 * Native mode: no sandbox, approval-policy or config override, no rewriting of Codex files, no
 * credentials copied; whatever Codex's own configuration decides is relayed (approvals,
 * permission requests, questions) and answered by the human.
 */
export interface CodexAdapterOptions {
  /** The Codex CLI (a command name on PATH or an absolute path). */
  readonly bin: string
  /** The CODEX_HOME whose daemon (or stdio child) runs the turns. */
  readonly codexHome: string
  readonly transport: "daemon" | "stdio"
  /** Run `codex app-server daemon start` when a task finds no daemon (never from probe). */
  readonly autostart: boolean
  readonly requestTimeoutSeconds: number
  /** How long a lost daemon connection is retried before the turn fails (default 30 s). */
  readonly reconnectWindowSeconds?: number
  /**
   * Start turns in Codex's plan collaboration mode. Never set by the bridge (native mode sends
   * no collaboration-mode override); tests use it to reach `item/tool/requestUserInput` the way
   * Codex's own plan-mode clients do.
   */
  readonly collaborationMode?: "plan"
  /** How the daemon's Unix socket is opened (tests cut connections through it). */
  readonly connectSocket?: (socketPath: string) => net.Socket
  /** The environment Codex commands run with (default: the bridge's own). */
  readonly env?: NodeJS.ProcessEnv
}

const FINAL_INTERRUPT = "5 seconds"

/** Codex's answer when the turn already ended. */
const noActiveTurn = (message: string): boolean => /no active turn/i.test(message)

/**
 * The adapter, in the caller's scope: its turns' relays run in that scope, and closing it asks
 * every turn still running here to stop (bounded, best effort) — the bridge's shutdown.
 */
const make = (options: CodexAdapterOptions) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const cli = yield* makeCodexCli(options)
    const turns = makeCodexTurns()

    const steer = (taskId: string, message: string): Effect.Effect<void, AgentError> =>
      Effect.suspend(() => {
        const turn = turns.active.get(taskId)
        const connection = turn?.connection
        if (
          turn === undefined ||
          turn.done ||
          turn.threadId === null ||
          turn.turnId === null ||
          connection === null ||
          connection === undefined
        ) {
          return Effect.fail(new AgentTaskNotActive({ message: "the task has no active Codex turn" }))
        }
        return connection
          .request("turn/steer", {
            threadId: turn.threadId,
            expectedTurnId: turn.turnId,
            input: [{ type: "text", text: message, text_elements: [] }]
          })
          .pipe(
            Effect.asVoid,
            Effect.mapError(
              (e): AgentError =>
                e._tag === "CodexRpcError" && noActiveTurn(e.message)
                  ? new AgentTaskNotActive({ message: "the Codex turn has ended" })
                  : new AgentProviderError({ message: "Codex did not accept the message" })
            )
          )
      })

    /** The bridge's stop (its decision is committed before it calls this): signalled, then sent. */
    const cancel = (taskId: string): Effect.Effect<void, AgentError> =>
      Effect.suspend(() => {
        const turn = turns.active.get(taskId)
        if (turn === undefined) return Effect.void
        turn.cancelRequested = true
        const connection = turn.connection
        const interrupt =
          turn.done || turn.threadId === null || turn.turnId === null || connection === null
            ? Effect.void
            : connection.request("turn/interrupt", { threadId: turn.threadId, turnId: turn.turnId }).pipe(
                Effect.asVoid,
                Effect.catchAll((e) =>
                  e._tag === "CodexRpcError" && noActiveTurn(e.message)
                    ? Effect.void
                    : Effect.fail(new AgentProviderError({ message: "Codex did not confirm the interrupt" }))
                )
              )
        return Effect.zipRight(Deferred.succeed(turn.stopSignalled, undefined), interrupt)
      })

    /** Bridge shutdown: ask every turn still running here to stop (bounded, best effort). */
    const close = (): Effect.Effect<void> =>
      Effect.forEach(
        [...turns.active.keys()],
        (taskId) => cancel(taskId).pipe(Effect.timeout(FINAL_INTERRUPT), Effect.ignore),
        { concurrency: "unbounded", discard: true }
      )
    yield* Effect.addFinalizer(close)

    const run = makeCodexRun({
      cli,
      turns,
      transport: options.transport,
      reconnectWindow: reconnectWindow(options.reconnectWindowSeconds),
      collaborationMode: options.collaborationMode,
      relayScope: scope
    })
    const adapter: ProviderAdapter = {
      name: "codex",
      inFlightRecovery: codexInFlightRecovery(options.transport),
      probe: makeCodexProbe(cli, options),
      run,
      reattach: makeCodexRestartReattach(options.transport, run),
      steer,
      cancel,
      reconcile: makeCodexReconcile(cli, turns),
      listModels: makeCodexListModels(cli),
      close
    }
    return adapter
  })

/** The adapter as the port's service, for the lifetime of the layer. */
const layer = (options: CodexAdapterOptions): Layer.Layer<ProviderAdapterTag> =>
  Layer.scoped(ProviderAdapterTag, make(options))

/** `layer`, with its options read from configuration. */
const layerConfig = (options: Config.Config<CodexAdapterOptions>) =>
  Layer.scoped(ProviderAdapterTag, Effect.flatMap(options, make))

export const CodexAdapter = { make, layer, layerConfig } as const

/** `CodexAdapter.make`, by the name the bridge and the tests know. */
export const makeCodexAdapter = make
