import { spawn } from "node:child_process"
import type * as net from "node:net"
import {
  type AgentError,
  AgentProfileNotAllowed,
  AgentProviderDisconnected,
  AgentProviderError,
  AgentRuntimeNotReady,
  AgentSessionNotResumable,
  AgentTaskNotActive,
  type ApprovalPayload,
  type ApprovalResolution,
  HostPathRedaction,
  type RuntimeInfo
} from "@serverfs/domain"
import { Effect, Either, ExecutionStrategy, Exit, Fiber, Queue, Scope } from "effect"
import type { ProviderAdapter, ReconcileResult, TurnRequest, TurnSink } from "../ProviderAdapter.js"
import {
  type AgentMessage,
  commandApproval,
  fileChangeApproval,
  finalTextOf,
  itemEvent,
  nativeDecision,
  PERMISSION_DENIED_REPLY,
  permissionApproval,
  permissionReply,
  questionPayload,
  questionReply,
  requestFailure,
  turnFailure
} from "./CodexMapping.js"
import {
  type CodexConnection,
  CodexUnavailable,
  controlSocketExists,
  controlSocketPath,
  type Incoming,
  JSONRPC_SERVER_ERROR,
  type Notification,
  openDaemonConnection,
  openStdioConnection,
  type RequestError
} from "./CodexTransport.js"
import type { RequestId } from "./protocol/generated/RequestId.js"
import type { ServerRequest } from "./protocol/generated/ServerRequest.js"
import type { Turn } from "./protocol/generated/v2/index.js"
import { CODEX_PROTOCOL_VERSION } from "./protocol/Version.js"

/**
 * The Codex runtime (spec v0.3 §4.1, §8, §9, §17, §20, §33; bridge-internals §7, §10): one
 * ServerFS task = one Codex turn, driven over the official App Server protocol through
 * `CodexTransport` (the managed daemon's control socket, or a stdio child).
 *
 * Native mode: `thread/start {cwd, serviceName}` (+ model only when the task names one) and
 * `turn/start {threadId, input, cwd}` — no sandbox, approval-policy or config override, no
 * rewriting of Codex files, no credentials copied; whatever Codex's own configuration decides
 * is relayed (approvals, permission requests, questions) and answered by the human. Each task
 * uses its own connection; a lost daemon connection is re-established and the turn re-attached
 * when the daemon still runs it (a replayed request keeps its ServerFS request), otherwise the
 * turn fails and the bridge interrupts the task.
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

const SERVICE_NAME = "serverfs-agent-bridge"
const CLIENT = { name: "serverfs-agent-bridge", title: "ServerFS Agent Bridge", version: "0.3.0" } as const
const AUTOSTART_TIMEOUT_MS = 30_000
const CANCEL_SETTLE = "10 seconds"
const FINAL_INTERRUPT = "5 seconds"
const REMEMBERED_RUNS = 10_000
/** Token-level streams ServerFS never records (spec §17: no token-by-token deltas). */
const OPT_OUT = [
  "item/agentMessage/delta",
  "item/plan/delta",
  "item/reasoning/summaryTextDelta",
  "item/reasoning/summaryPartAdded",
  "item/reasoning/textDelta",
  "item/commandExecution/outputDelta",
  "item/fileChange/outputDelta",
  "thread/tokenUsage/updated",
  "account/rateLimits/updated"
]

// ---- per-task state ---------------------------------------------------------------------------
type Reply =
  | { readonly _tag: "result"; readonly value: unknown }
  | { readonly _tag: "error"; readonly message: string }

/** A Codex server request relayed to the human; survives a reconnect (Codex replays it). */
interface Interaction {
  readonly key: string
  requestId: RequestId
  connection: CodexConnection
  reply: Reply | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

interface ActiveTurn {
  threadId: string | null
  turnId: string | null
  connection: CodexConnection | null
  /** ServerFS asked the turn to stop (cancel, cancel_task, an ended interaction). */
  cancelRequested: boolean
  /** turn/completed was seen. */
  done: boolean
  /** The daemon lost the turn: leave the pending ServerFS request for the bridge to settle. */
  lost: boolean
}

type Signal =
  | { readonly _tag: "continue" }
  | { readonly _tag: "completed"; readonly turn: Turn }
  | { readonly _tag: "closed"; readonly reason: string }

const CONTINUE: Signal = { _tag: "continue" }

/** The Codex server requests ServerFS relays to the human (every other one is declined). */
const RELAYED_METHODS = [
  "item/commandExecution/requestApproval",
  "item/fileChange/requestApproval",
  "item/permissions/requestApproval",
  "item/tool/requestUserInput"
] as const
type RelayedRequest = Extract<ServerRequest, { readonly method: (typeof RELAYED_METHODS)[number] }>
const RELAYED: ReadonlySet<string> = new Set(RELAYED_METHODS)
const isRelayed = (message: ServerRequest): message is RelayedRequest => RELAYED.has(message.method)

const userAgentVersion = (userAgent: string): string | null => /^[^/\s]+\/(\S+)/.exec(userAgent)?.[1] ?? null

/** Run a short Codex CLI command (bounded); its stdout on exit code 0. */
const runCli = (
  bin: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  timeoutMs: number
): Effect.Effect<string, CodexUnavailable> =>
  Effect.async<string, CodexUnavailable>((resume) => {
    const child = spawn(bin, [...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let settled = false
    const finish = (result: Effect.Effect<string, CodexUnavailable>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(result)
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      finish(Effect.fail(new CodexUnavailable({ reason: `codex ${args.join(" ")} timed out` })))
    }, timeoutMs)
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr?.resume()
    child.once("error", () =>
      finish(Effect.fail(new CodexUnavailable({ reason: "the codex binary could not be run" })))
    )
    child.once("close", (code) =>
      finish(
        code === 0
          ? Effect.succeed(stdout)
          : Effect.fail(new CodexUnavailable({ reason: `codex ${args.join(" ")} exited with ${code}` }))
      )
    )
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

export const makeCodexAdapter = (options: CodexAdapterOptions): Effect.Effect<ProviderAdapter> =>
  Effect.gen(function* () {
    const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), CODEX_HOME: options.codexHome }
    const socketPath = controlSocketPath(options.codexHome)
    const requestTimeoutMs = Math.max(1, options.requestTimeoutSeconds * 1000)
    const reconnectWindowMs = (options.reconnectWindowSeconds ?? 30) * 1000
    const autostartLock = yield* Effect.makeSemaphore(1)
    const active = new Map<string, ActiveTurn>()
    /** Per task run in this process: did its turn/start go out? (reconcile without a thread). */
    const runs = new Map<string, "no-turn" | "turn-sent">()
    const remember = (taskId: string, state: "no-turn" | "turn-sent") => {
      runs.delete(taskId)
      runs.set(taskId, state)
      if (runs.size > REMEMBERED_RUNS) {
        const oldest = runs.keys().next()
        if (oldest.done !== true) runs.delete(oldest.value)
      }
    }

    const connectionOptions = {
      requestTimeoutSeconds: options.requestTimeoutSeconds,
      client: CLIENT,
      optOutNotifications: OPT_OUT
    }

    /** A new connection to Codex (the daemon's socket, or a stdio child), initialized. */
    const connect: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope> =
      options.transport === "daemon"
        ? openDaemonConnection({
            ...connectionOptions,
            socketPath,
            ...(options.connectSocket === undefined ? {} : { connectSocket: options.connectSocket })
          })
        : openStdioConnection({ ...connectionOptions, bin: options.bin, env })

    /** `codex app-server daemon start` (the only lifecycle command ServerFS runs), once at a time. */
    const startDaemon = autostartLock.withPermits(1)(
      Effect.suspend(() =>
        controlSocketExists(socketPath)
          ? Effect.void
          : runCli(options.bin, ["app-server", "daemon", "start"], env, AUTOSTART_TIMEOUT_MS).pipe(
              Effect.asVoid
            )
      )
    )

    const connectForTask: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope> =
      options.transport === "daemon" && options.autostart
        ? connect.pipe(
            Effect.catchTag("CodexUnavailable", (error) =>
              controlSocketExists(socketPath) ? Effect.fail(error) : Effect.zipRight(startDaemon, connect)
            )
          )
        : connect

    interface Opened {
      readonly connection: CodexConnection
      readonly scope: Scope.CloseableScope
    }
    /** A connection in a scope of its own (replaced on reconnect, closed by the run's finalizer). */
    const openOwned = (how: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope>) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make(ExecutionStrategy.sequential)
        const connection = yield* Scope.extend(how, scope).pipe(
          Effect.tapError(() => Scope.close(scope, Exit.void))
        )
        return { connection, scope } satisfies Opened
      })

    // ---- probe ----------------------------------------------------------------------------------
    const info = (available: boolean, version: string | null, detail?: string): RuntimeInfo => ({
      name: "codex",
      available,
      version,
      persistent_session: true,
      live_steer: true,
      interactive_approval: true,
      interactive_question: true,
      in_flight_recovery: "session-resume",
      ...(detail === undefined ? {} : { detail })
    })

    const cliVersion = runCli(options.bin, ["--version"], env, requestTimeoutMs).pipe(
      Effect.map((out) => /(\d+\.\d+\.\d+[^\s]*)/.exec(out)?.[1] ?? null)
    )

    const mismatch = (version: string | null): string | undefined =>
      version !== null && version !== CODEX_PROTOCOL_VERSION
        ? `the protocol types were generated for Codex ${CODEX_PROTOCOL_VERSION}`
        : undefined

    const probe = (): Effect.Effect<RuntimeInfo> => {
      if (options.transport === "stdio") {
        return cliVersion.pipe(
          Effect.map((version) => info(true, version, mismatch(version))),
          Effect.catchAll(() => Effect.succeed(info(false, null, "the codex binary could not be run")))
        )
      }
      if (!controlSocketExists(socketPath)) {
        return options.autostart
          ? cliVersion.pipe(
              Effect.map((version) =>
                info(true, version, "the Codex daemon is not running; the first task starts it (autostart)")
              ),
              Effect.catchAll(() => Effect.succeed(info(false, null, "the codex binary could not be run")))
            )
          : Effect.succeed(info(false, null, "the Codex app-server daemon is not running"))
      }
      return Effect.scoped(connect).pipe(
        Effect.map((connection) => {
          const version = userAgentVersion(connection.userAgent)
          return info(true, version, mismatch(version))
        }),
        Effect.catchAll((e) => Effect.succeed(info(false, null, e.reason)))
      )
    }

    // ---- the turn -------------------------------------------------------------------------------
    const run = (
      request: TurnRequest,
      sink: TurnSink
    ): Effect.Effect<{ readonly finalText: string }, AgentError> =>
      Effect.gen(function* () {
        if (request.profile !== "workspace-write") {
          return yield* new AgentProfileNotAllowed({
            message: "Codex runs in native mode only with the workspace-write profile"
          })
        }
        // Everything shown is redacted by the one rule (spec §16); every provider text that goes
        // into an AgentError passes `message` (the bridge's own pass comes on top).
        const redaction = new HostPathRedaction(request.workdirRoot)
        const scrub = (message: string) => redaction.message(message)
        const failure = (what: string) => (e: RequestError) => requestFailure(redaction, what, e)

        const turn: ActiveTurn = {
          threadId: null,
          turnId: null,
          connection: null,
          cancelRequested: false,
          done: false,
          lost: false
        }
        const interactions = new Map<string, Interaction>()
        const messages: AgentMessage[] = []
        const changedPaths = new Map<string, ReadonlyArray<string>>()
        let lastError: string | null = null
        /** The run's connection and its scope; `adopt` also makes it `turn.connection`. */
        let current: Opened | null = null
        const adopt = (opened: Opened): Opened => {
          turn.connection = opened.connection
          return opened
        }

        active.set(request.taskId, turn)
        remember(request.taskId, "no-turn")

        /** Everything the run owns, in order: stop the turn if it may still run, then let go. */
        const finalize = Effect.gen(function* () {
          if (active.get(request.taskId) === turn) active.delete(request.taskId)
          if (
            !turn.done &&
            !turn.lost &&
            turn.threadId !== null &&
            turn.turnId !== null &&
            current?.connection.isOpen() === true
          ) {
            yield* current.connection
              .request("turn/interrupt", { threadId: turn.threadId, turnId: turn.turnId })
              .pipe(Effect.timeout(FINAL_INTERRUPT), Effect.ignore)
          }
          if (!turn.lost) {
            for (const interaction of interactions.values()) {
              if (interaction.fiber !== undefined) yield* Fiber.interrupt(interaction.fiber)
            }
          }
          if (current !== null) yield* Scope.close(current.scope, Exit.void)
        })

        const body = Effect.gen(function* () {
          current = adopt(
            yield* openOwned(connectForTask).pipe(
              Effect.mapError((e) => new AgentRuntimeNotReady({ message: scrub(e.reason) }))
            )
          )

          // The thread: new, or the recorded one of the task this one continues.
          let threadModel: string
          if (request.resume === null) {
            const started = yield* current.connection
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
            const resumed = yield* current.connection
              .request("thread/resume", {
                threadId: sessionId,
                excludeTurns: true,
                ...(request.model === null ? {} : { model: request.model })
              })
              .pipe(
                Effect.mapError((e) =>
                  e._tag === "CodexRpcError"
                    ? new AgentSessionNotResumable({
                        message: `the Codex thread cannot be resumed: ${scrub(e.message)}`
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

          remember(request.taskId, "turn-sent")
          const started = yield* current.connection
            .request("turn/start", {
              threadId,
              input: [{ type: "text", text: request.prompt, text_elements: [] }],
              cwd: request.cwd,
              ...(options.collaborationMode === "plan"
                ? {
                    collaborationMode: {
                      mode: "plan",
                      settings: { model: threadModel, reasoning_effort: null, developer_instructions: null }
                    }
                  }
                : {})
            })
            .pipe(Effect.mapError(failure("turn/start")))
          const turnId = started.turn.id
          turn.turnId = turnId
          yield* sink.nativeIds({ turnId })
          yield* sink.event("turn.started", request.resume === null ? {} : { continued: true })
          if (turn.cancelRequested) {
            yield* current.connection.request("turn/interrupt", { threadId, turnId }).pipe(Effect.ignore)
          }

          // ---- server requests ----------------------------------------------------------------
          const send = (interaction: Interaction): Effect.Effect<void> =>
            Effect.suspend(() => {
              const reply = interaction.reply
              if (reply === undefined) return Effect.void
              return (
                reply._tag === "result"
                  ? interaction.connection.respond(interaction.requestId, reply.value)
                  : interaction.connection.respondError(
                      interaction.requestId,
                      JSONRPC_SERVER_ERROR,
                      reply.message
                    )
              ).pipe(Effect.asVoid)
            })

          const relay = (interaction: Interaction, decide: Effect.Effect<Reply>) =>
            Effect.flatMap(decide, (reply) =>
              Effect.suspend(() => {
                interaction.reply = reply
                return send(interaction)
              })
            )

          /** An ended interaction (cancelled, expired, staled by the bridge) stops the turn. */
          const ended = (reply: Reply) =>
            Effect.sync((): Reply => {
              turn.cancelRequested = true
              return reply
            })

          const decline = (method: string, reason: string, id: RequestId, on: CodexConnection) =>
            Effect.zipRight(
              on.respondError(id, JSONRPC_SERVER_ERROR, reason),
              sink.event("provider.request_declined", { method, reason })
            )

          /**
           * Relay an approval; its native reply. cancel_task also stops the turn; an ended
           * interaction answers `onEnded` (and stops the turn).
           */
          const approval = (
            payload: ApprovalPayload,
            replyFor: (resolution: ApprovalResolution) => unknown,
            onEnded: unknown
          ): Effect.Effect<Reply> =>
            sink.requestApproval(payload).pipe(
              Effect.map((resolution): Reply => {
                if (resolution.decision === "cancel_task") turn.cancelRequested = true
                return { _tag: "result", value: replyFor(resolution) }
              }),
              Effect.catchTag("InteractionEnded", () => ended({ _tag: "result", value: onEnded }))
            )
          const decisionReply = (resolution: ApprovalResolution) => ({
            decision: nativeDecision(resolution.decision)
          })
          const CANCELLED = { decision: "cancel" }

          const decideFor = (message: RelayedRequest): Effect.Effect<Reply> | string => {
            switch (message.method) {
              case "item/commandExecution/requestApproval":
                return approval(commandApproval(message.params, redaction), decisionReply, CANCELLED)
              case "item/fileChange/requestApproval":
                return approval(
                  fileChangeApproval(
                    message.params,
                    changedPaths.get(message.params.itemId) ?? [],
                    redaction
                  ),
                  decisionReply,
                  CANCELLED
                )
              case "item/permissions/requestApproval": {
                const params = message.params
                return approval(
                  permissionApproval(params, redaction),
                  (resolution) => permissionReply(params, resolution),
                  PERMISSION_DENIED_REPLY
                )
              }
              case "item/tool/requestUserInput": {
                const params = message.params
                const payload = questionPayload(params)
                if (payload === undefined) {
                  return "PERMISSION_OUTSIDE_POLICY: ServerFS does not relay secret questions"
                }
                return sink.requestQuestion(payload).pipe(
                  Effect.map(
                    (resolution): Reply => ({ _tag: "result", value: questionReply(params, resolution) })
                  ),
                  Effect.catchTag("InteractionEnded", () =>
                    ended({ _tag: "error", message: "the question was not answered" })
                  )
                )
              }
            }
          }

          const onServerRequest = (message: ServerRequest, on: CodexConnection): Effect.Effect<void> =>
            Effect.gen(function* () {
              const params = message.params as { readonly threadId?: unknown; readonly itemId?: unknown }
              const relayable = isRelayed(message)
              if (relayable && params.threadId !== threadId) {
                return yield* decline(message.method, "not a request of this ServerFS task", message.id, on)
              }
              const approvalId =
                message.method === "item/commandExecution/requestApproval"
                  ? (message.params.approvalId ?? "")
                  : ""
              const key = `${message.method}|${String(params.itemId)}|${approvalId}`
              const known = relayable ? interactions.get(key) : undefined
              if (known !== undefined) {
                // Replayed after a reconnect: the same ServerFS request, answered on this connection.
                known.requestId = message.id
                known.connection = on
                return yield* send(known)
              }
              const decision = relayable
                ? decideFor(message)
                : `ServerFS does not support the Codex request ${message.method}`
              if (typeof decision === "string")
                return yield* decline(message.method, decision, message.id, on)
              const interaction: Interaction = {
                key,
                requestId: message.id,
                connection: on,
                reply: undefined,
                fiber: undefined
              }
              interactions.set(key, interaction)
              interaction.fiber = yield* Effect.forkDaemon(relay(interaction, decision))
            })

          /** Codex withdrew a request (answered elsewhere, turn ended): the ServerFS request goes stale. */
          const onResolved = (requestId: RequestId) =>
            Effect.gen(function* () {
              for (const interaction of interactions.values()) {
                if (interaction.requestId !== requestId || interaction.connection !== turn.connection)
                  continue
                interactions.delete(interaction.key)
                if (interaction.reply === undefined && interaction.fiber !== undefined) {
                  yield* Fiber.interrupt(interaction.fiber)
                }
              }
            })

          // ---- notifications ------------------------------------------------------------------
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
                  if (item.type === "fileChange")
                    changedPaths.set(
                      item.id,
                      item.changes.map((c) => c.path)
                    )
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
                    message: scrub(n.params.error.message),
                    will_retry: n.params.willRetry
                  })
                  return CONTINUE
                case "serverRequest/resolved":
                  if (n.params.threadId === threadId) yield* onResolved(n.params.requestId)
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
                return Effect.as(onServerRequest(incoming.message, on), CONTINUE)
              case "Notification":
                return onNotification(incoming.message)
            }
          }

          // ---- reconnect (daemon) -------------------------------------------------------------
          /**
           * The daemon connection is gone. Reconnect within the window, resume the thread and
           * look at the turn: still running → re-attached (requests Codex replays keep their
           * ServerFS request; ones it does not replay were withdrawn); completed meanwhile →
           * that outcome; anything else → the turn is lost.
           */
          const reattach = Effect.gen(function* () {
            yield* sink.event("provider.disconnected", { reconnecting: true })
            /** The turn cannot be followed any more: its pending request is left for the bridge. */
            const lostTurn = (detail: string) =>
              Effect.zipRight(
                Effect.sync(() => {
                  turn.lost = true
                }),
                Effect.fail(new AgentProviderDisconnected({ message: detail }))
              )
            const deadline = Date.now() + reconnectWindowMs
            let delay = 200
            let opened: Opened | undefined
            while (opened === undefined) {
              const attempt = yield* openOwned(connect).pipe(Effect.either)
              if (Either.isRight(attempt)) opened = attempt.right
              else if (Date.now() + delay > deadline) {
                return yield* lostTurn("the Codex daemon could not be reached again during the turn")
              } else {
                yield* Effect.sleep(delay)
                delay = Math.min(delay * 2, 2_000)
              }
            }
            if (current !== null) yield* Scope.close(current.scope, Exit.void)
            current = adopt(opened)
            const read = yield* current.connection
              .request("thread/resume", { threadId, excludeTurns: true })
              .pipe(
                Effect.zipRight(current.connection.request("thread/read", { threadId, includeTurns: true })),
                Effect.catchAll(() => lostTurn("the Codex thread could not be resumed after a reconnect"))
              )
            const ours = read.thread.turns.find((t) => t.id === turnId)
            if (ours === undefined || ours.status === "interrupted" || ours.status === "failed") {
              return yield* lostTurn(
                `the Codex daemon lost the turn while ServerFS was disconnected (it is ${ours?.status ?? "gone"})`
              )
            }
            if (ours.status === "completed") return [{ _tag: "completed", turn: ours } as Signal]
            // Replays arrive while the thread resumes: handle what came so far, then drop the rest.
            const early: Signal[] = []
            for (const incoming of yield* Queue.takeAll(current.connection.incoming)) {
              const signal = yield* dispatch(incoming, current.connection)
              if (signal._tag !== "continue") early.push(signal)
            }
            for (const interaction of [...interactions.values()]) {
              if (interaction.connection === current.connection) continue
              interactions.delete(interaction.key)
              if (interaction.reply === undefined && interaction.fiber !== undefined) {
                yield* Fiber.interrupt(interaction.fiber)
              }
            }
            yield* sink.event("provider.reattached", {})
            return early
          })

          // ---- the loop -----------------------------------------------------------------------
          const queued: Signal[] = []
          let outcome: Turn | undefined
          while (outcome === undefined) {
            const signal =
              queued.shift() ??
              (yield* dispatch(yield* Queue.take(current.connection.incoming), current.connection))
            if (signal._tag === "completed") outcome = signal.turn
            else if (signal._tag === "closed") {
              if (options.transport !== "daemon") {
                return yield* new AgentProviderDisconnected({
                  message: "the codex app-server child exited during the turn"
                })
              }
              queued.push(...(yield* reattach))
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
                // ServerFS stopped the turn: the bridge has cancelled (or is cancelling) the task and
                // interrupts this run; a failure raced against that would mark it failed instead.
                yield* sink.event("turn.interrupted", { requested_by: "serverfs" })
                yield* Effect.sleep(CANCEL_SETTLE)
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

        return yield* body.pipe(Effect.ensuring(finalize))
      })

    // ---- steer / cancel -------------------------------------------------------------------------
    const steer = (taskId: string, message: string): Effect.Effect<void, AgentError> =>
      Effect.suspend(() => {
        const turn = active.get(taskId)
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
                e._tag === "CodexRpcError" && /no active turn/i.test(e.message)
                  ? new AgentTaskNotActive({ message: "the Codex turn has ended" })
                  : new AgentProviderError({ message: "Codex did not accept the message" })
            )
          )
      })

    const cancel = (taskId: string): Effect.Effect<void, AgentError> =>
      Effect.suspend(() => {
        const turn = active.get(taskId)
        if (turn === undefined) return Effect.void
        turn.cancelRequested = true
        const connection = turn.connection
        if (turn.done || turn.threadId === null || turn.turnId === null || connection === null)
          return Effect.void
        return connection.request("turn/interrupt", { threadId: turn.threadId, turnId: turn.turnId }).pipe(
          Effect.asVoid,
          Effect.catchAll((e) =>
            e._tag === "CodexRpcError" && /no active turn/i.test(e.message)
              ? Effect.void
              : Effect.fail(new AgentProviderError({ message: "Codex did not confirm the interrupt" }))
          )
        )
      })

    // ---- reconcile ------------------------------------------------------------------------------
    const reconcile = (turn: { readonly taskId: string; readonly sessionId: string | null }) =>
      Effect.suspend((): Effect.Effect<ReconcileResult> => {
        const live = active.get(turn.taskId)
        if (live !== undefined && !live.done) {
          return Effect.succeed({
            status: "UNKNOWN",
            providerActive: true,
            detail: "the turn is still driven by this process"
          })
        }
        const sessionId = turn.sessionId
        if (sessionId === null) {
          return Effect.succeed({
            status: "NOT_RECOVERABLE",
            providerActive: runs.get(turn.taskId) === "no-turn" ? false : null,
            detail:
              runs.get(turn.taskId) === "no-turn"
                ? "no Codex thread was started and no turn was sent"
                : "no Codex thread was recorded for the task"
          })
        }
        return Effect.scoped(
          Effect.flatMap(connect, (connection) =>
            connection.request("thread/read", { threadId: sessionId, includeTurns: true })
          )
        ).pipe(
          Effect.map(
            (read): ReconcileResult =>
              read.thread.status.type === "active"
                ? { status: "UNKNOWN", providerActive: true, detail: "the Codex thread is still active" }
                : {
                    status: "SESSION_RESUMABLE",
                    providerActive: false,
                    detail: `the Codex thread is ${read.thread.status.type}`
                  }
          ),
          Effect.catchAll(() =>
            Effect.succeed<ReconcileResult>({
              status: "UNKNOWN",
              providerActive: null,
              detail: "the Codex thread could not be read"
            })
          )
        )
      })

    /** Bridge shutdown: ask every turn still running here to stop (bounded, best effort). */
    const close = (): Effect.Effect<void> =>
      Effect.forEach(
        [...active.keys()],
        (taskId) => cancel(taskId).pipe(Effect.timeout(FINAL_INTERRUPT), Effect.ignore),
        {
          concurrency: "unbounded",
          discard: true
        }
      )

    const adapter: ProviderAdapter = {
      name: "codex",
      inFlightRecovery: "session-resume",
      probe,
      run,
      steer,
      cancel,
      reconcile,
      close
    }
    return adapter
  })
