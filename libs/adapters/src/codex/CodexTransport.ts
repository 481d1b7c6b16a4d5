import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as readline from "node:readline"
import { Data, Deferred, Duration, Effect, Exit, FiberId, Option, Queue, type Scope } from "effect"
import WebSocket from "ws"
import { decodeFrame, isNotification, isResponseTo, isServerRequest } from "./CodexMessages.js"
import type { ClientRequest } from "./protocol/generated/ClientRequest.js"
import type { InitializeResponse } from "./protocol/generated/InitializeResponse.js"
import type { RequestId } from "./protocol/generated/RequestId.js"
import type { ServerNotificationEnvelope } from "./protocol/generated/ServerNotificationEnvelope.js"
import type { ServerRequest } from "./protocol/generated/ServerRequest.js"
import type {
  ModelListResponse,
  ThreadReadResponse,
  ThreadResumeResponse,
  ThreadStartResponse,
  TurnInterruptResponse,
  TurnStartResponse,
  TurnSteerResponse
} from "./protocol/generated/v2/index.js"

/**
 * The one place that knows how ServerFS talks to a Codex App Server (spec v0.3 §4.1, §28):
 * JSON-RPC without the "jsonrpc" field, over either
 *
 * - the official **managed daemon** control socket `$CODEX_HOME/app-server-control/
 *   app-server-control.sock`: a WebSocket (handshake URI `ws://localhost/rpc`, JSON text
 *   frames) over that Unix socket — never raw JSONL; or
 * - a **stdio** `codex app-server` child owned by the caller's scope: one JSON object a line.
 *
 * A connection performs `initialize` + `initialized` before it is handed out. Requests carry
 * integer ids and a timeout; the server's notifications and requests arrive on one queue, which
 * ends with a `Closed` item when the connection is lost. Server requests are answered with a
 * result or a JSON-RPC error. Everything is a scoped resource: closing the scope closes the
 * socket or stops the child.
 *
 * Message shapes are the types generated from the pinned codex (./protocol/generated).
 */

// ---- protocol types ---------------------------------------------------------------------------
export type ClientMethod = ClientRequest["method"]
export type ParamsOf<M extends ClientMethod> = Extract<ClientRequest, { method: M }>["params"]

/** The result type of every client request this adapter sends. */
export interface ResponseOf {
  readonly initialize: InitializeResponse
  readonly "thread/start": ThreadStartResponse
  readonly "thread/resume": ThreadResumeResponse
  readonly "thread/read": ThreadReadResponse
  readonly "turn/start": TurnStartResponse
  readonly "turn/steer": TurnSteerResponse
  readonly "turn/interrupt": TurnInterruptResponse
  readonly "model/list": ModelListResponse
}
export type UsedMethod = keyof ResponseOf & ClientMethod

export type Notification = ServerNotificationEnvelope

export type Incoming =
  | { readonly _tag: "Notification"; readonly message: Notification }
  | { readonly _tag: "ServerRequest"; readonly message: ServerRequest }
  | { readonly _tag: "Closed"; readonly reason: string }
  /** An acted-on message whose fields did not decode (a request among them carries its id). */
  | { readonly _tag: "Malformed"; readonly method: string; readonly id: RequestId | undefined }

// ---- errors -----------------------------------------------------------------------------------
/** No connection could be made (daemon not running, binary missing, handshake refused). */
export class CodexUnavailable extends Data.TaggedError("CodexUnavailable")<{ readonly reason: string }> {}
/** The server answered a request with a JSON-RPC error. */
export class CodexRpcError extends Data.TaggedError("CodexRpcError")<{
  readonly method: string
  readonly code: number
  readonly message: string
}> {}
/** A request got no answer within the request timeout. */
export class CodexTimeout extends Data.TaggedError("CodexTimeout")<{ readonly method: string }> {}
/** The connection was lost (before or while a request was pending). */
export class CodexDisconnected extends Data.TaggedError("CodexDisconnected")<{ readonly reason: string }> {}

export type RequestError = CodexRpcError | CodexTimeout | CodexDisconnected

// ---- the connection ---------------------------------------------------------------------------
export interface CodexConnection {
  readonly kind: "daemon" | "stdio"
  /** The server's user agent from `initialize` (`<originator>/<codex version> …`). */
  readonly userAgent: string
  readonly request: <M extends UsedMethod>(
    method: M,
    params: ParamsOf<M>
  ) => Effect.Effect<ResponseOf[M], RequestError>
  /** Answer a server request; false when the connection is already gone. */
  readonly respond: (id: RequestId, result: unknown) => Effect.Effect<boolean>
  readonly respondError: (id: RequestId, code: number, message: string) => Effect.Effect<boolean>
  readonly incoming: Queue.Dequeue<Incoming>
  readonly isOpen: () => boolean
}

export interface ClientIdentity {
  readonly name: string
  readonly title: string
  readonly version: string
}

export interface ConnectionOptions {
  readonly requestTimeoutSeconds: number
  readonly client: ClientIdentity
  /** Notification methods the server should not send on this connection (token deltas, …). */
  readonly optOutNotifications?: ReadonlyArray<string>
}

/** A raw, message-oriented channel (a WebSocket or a JSONL pipe). */
interface Channel {
  readonly send: (text: string) => boolean
}

interface Wiring {
  readonly onMessage: (text: string) => void
  readonly onClose: (reason: string) => void
}

export const JSONRPC_SERVER_ERROR = -32000

/**
 * JSON-RPC over a channel: ids, pending requests, timeouts, the incoming queue, then the
 * initialize handshake.
 */
const rpcOver = <E>(
  kind: CodexConnection["kind"],
  openChannel: (wiring: Wiring) => Effect.Effect<Channel, E, Scope.Scope>,
  options: ConnectionOptions
): Effect.Effect<CodexConnection, E | CodexUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const incoming = yield* Effect.acquireRelease(Queue.unbounded<Incoming>(), (q) => Queue.shutdown(q))
    const pending = new Map<
      number,
      { readonly method: string; readonly deferred: Deferred.Deferred<unknown, RequestError> }
    >()
    let open = true
    let nextId = 1

    const closeWith = (reason: string) => {
      if (!open) return
      open = false
      for (const { deferred } of pending.values()) {
        Deferred.unsafeDone(deferred, Exit.fail(new CodexDisconnected({ reason })))
      }
      pending.clear()
      Queue.unsafeOffer(incoming, { _tag: "Closed", reason })
    }

    const onMessage = (text: string) => {
      const decoded = decodeFrame(text)
      if (Option.isNone(decoded)) return
      const frame = decoded.value
      if (frame.method !== undefined) {
        const hasId = frame.id !== undefined
        Queue.unsafeOffer(
          incoming,
          hasId
            ? isServerRequest(frame)
              ? { _tag: "ServerRequest", message: frame }
              : { _tag: "Malformed", method: frame.method, id: frame.id }
            : isNotification(frame)
              ? { _tag: "Notification", message: frame }
              : { _tag: "Malformed", method: frame.method, id: undefined }
        )
        return
      }
      if (typeof frame.id !== "number") return
      const entry = pending.get(frame.id)
      if (entry === undefined) return
      pending.delete(frame.id)
      const error = frame.error
      Deferred.unsafeDone(
        entry.deferred,
        error !== undefined && error !== null
          ? Exit.fail(
              new CodexRpcError({
                method: entry.method,
                code: typeof error.code === "number" ? error.code : 0,
                message: typeof error.message === "string" ? error.message : "error"
              })
            )
          : Exit.succeed(frame.result)
      )
    }

    const channel = yield* openChannel({ onMessage, onClose: closeWith })
    yield* Effect.addFinalizer(() => Effect.sync(() => closeWith("closed by ServerFS")))

    const timeout = Duration.millis(Math.max(1, options.requestTimeoutSeconds * 1000))
    const send = (payload: Record<string, unknown>): boolean => open && channel.send(JSON.stringify(payload))

    const request = <M extends UsedMethod>(method: M, params: ParamsOf<M>) =>
      Effect.suspend(() => {
        if (!open) return Effect.fail(new CodexDisconnected({ reason: "the connection is closed" }))
        const id = nextId++
        const deferred = Deferred.unsafeMake<unknown, RequestError>(FiberId.none)
        pending.set(id, { method, deferred })
        if (!send({ id, method, params })) {
          pending.delete(id)
          return Effect.fail(new CodexDisconnected({ reason: "the connection is closed" }))
        }
        return Deferred.await(deferred).pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new CodexTimeout({ method }) }),
          Effect.ensuring(Effect.sync(() => pending.delete(id))),
          Effect.flatMap((result) =>
            isResponseTo<M, ResponseOf[M]>(method, result)
              ? Effect.succeed(result)
              : Effect.fail(
                  new CodexRpcError({ method, code: 0, message: "a response ServerFS could not read" })
                )
          )
        )
      })

    const connection: CodexConnection = {
      kind,
      userAgent: "",
      request,
      respond: (id, result) => Effect.sync(() => send({ id, result })),
      respondError: (id, code, message) => Effect.sync(() => send({ id, error: { code, message } })),
      incoming,
      isOpen: () => open
    }

    const initialized = yield* request("initialize", {
      clientInfo: { name: options.client.name, title: options.client.title, version: options.client.version },
      capabilities: {
        experimentalApi: true,
        requestAttestation: false,
        ...(options.optOutNotifications === undefined
          ? {}
          : { optOutNotificationMethods: [...options.optOutNotifications] })
      }
    }).pipe(Effect.mapError((e) => new CodexUnavailable({ reason: `initialize failed: ${e._tag}` })))
    send({ method: "initialized" })
    return { ...connection, userAgent: initialized.userAgent }
  })

// ---- managed daemon: WebSocket over the control socket -----------------------------------------
export const controlSocketPath = (codexHome: string): string =>
  path.join(codexHome, "app-server-control", "app-server-control.sock")

export interface DaemonOptions extends ConnectionOptions {
  readonly socketPath: string
  /** How the Unix socket is opened (tests wrap it to cut the connection). */
  readonly connectSocket?: (socketPath: string) => net.Socket
}

/** Does the control socket exist (its symlink and the socket it points to)? Nothing is started. */
export const controlSocketExists = (socketPath: string): boolean => {
  try {
    return fs.statSync(socketPath).isSocket()
  } catch {
    return false
  }
}

export const openDaemonConnection = (
  options: DaemonOptions
): Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope> =>
  rpcOver(
    "daemon",
    (wiring) =>
      Effect.acquireRelease(
        Effect.async<WebSocket, CodexUnavailable>((resume) => {
          if (!controlSocketExists(options.socketPath)) {
            resume(
              Effect.fail(new CodexUnavailable({ reason: "the Codex app-server daemon is not running" }))
            )
            return
          }
          const connect = options.connectSocket ?? ((p: string) => net.connect(p))
          const ws = new WebSocket("ws://localhost/rpc", {
            createConnection: () => connect(options.socketPath),
            perMessageDeflate: false,
            handshakeTimeout: Math.max(1, options.requestTimeoutSeconds * 1000)
          })
          let settled = false
          ws.on("message", (data, isBinary) => {
            if (!isBinary) wiring.onMessage(data.toString())
          })
          ws.on("close", (code) => {
            wiring.onClose(`the daemon connection closed (${code})`)
            if (!settled) {
              settled = true
              resume(Effect.fail(new CodexUnavailable({ reason: "the daemon closed the connection" })))
            }
          })
          ws.on("error", () => {
            if (!settled) {
              settled = true
              resume(
                Effect.fail(
                  new CodexUnavailable({ reason: "the daemon control socket refused the connection" })
                )
              )
            }
            wiring.onClose("the daemon connection failed")
          })
          ws.on("open", () => {
            if (settled) return
            settled = true
            resume(Effect.succeed(ws))
          })
          return Effect.sync(() => ws.terminate())
        }),
        (ws) => Effect.sync(() => ws.terminate())
      ).pipe(
        Effect.map(
          (ws): Channel => ({
            send: (text) => {
              if (ws.readyState !== WebSocket.OPEN) return false
              ws.send(text)
              return true
            }
          })
        )
      ),
    options
  )

// ---- stdio: a `codex app-server` child ---------------------------------------------------------
export interface StdioOptions extends ConnectionOptions {
  readonly bin: string
  readonly env: NodeJS.ProcessEnv
}

const STOP_GRACE_MS = 2_000

/** Stop a child: close its stdin, SIGTERM, then SIGKILL after a grace period. */
const stopChild = (child: ChildProcess): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resume(Effect.void)
      return
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.stdin?.end()
    child.kill("SIGTERM")
  })

export const openStdioConnection = (
  options: StdioOptions
): Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope> =>
  rpcOver(
    "stdio",
    (wiring) =>
      Effect.acquireRelease(
        Effect.async<ChildProcess, CodexUnavailable>((resume) => {
          const child = spawn(options.bin, ["app-server"], {
            env: options.env,
            stdio: ["pipe", "pipe", "pipe"]
          })
          let settled = false
          child.once("error", () => {
            wiring.onClose("the codex app-server child could not run")
            if (!settled) {
              settled = true
              resume(Effect.fail(new CodexUnavailable({ reason: "the codex binary could not be started" })))
            }
          })
          child.once("spawn", () => {
            if (settled) return
            settled = true
            resume(Effect.succeed(child))
          })
          // stderr is the child's log: drained, never relayed (it may hold host paths).
          child.stderr?.resume()
          child.stdin?.on("error", () => {})
          const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })
          lines.on("line", (line) => wiring.onMessage(line))
          // After the last line was delivered: the output closed (the child exited or was stopped).
          lines.once("close", () => wiring.onClose("the codex app-server child exited"))
        }),
        stopChild
      ).pipe(
        Effect.map(
          (child): Channel => ({
            send: (text) => {
              const stdin = child.stdin
              if (stdin === null || stdin.destroyed || !stdin.writable) return false
              stdin.write(`${text}\n`)
              return true
            }
          })
        )
      ),
    options
  )
