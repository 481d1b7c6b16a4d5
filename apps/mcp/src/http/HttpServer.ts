import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { allowedHostsFor, type HttpSettings } from "@serverfs/policy"
import { AuditLog, AuditSink } from "@serverfs/telemetry-local"
import { Data, DateTime, Duration, Effect, Runtime, Schedule, type Scope } from "effect"
import { makeBodyBudget } from "./BodyBudget.js"
import { checkRequest, guardPolicy } from "./Guards.js"
import { handleMcp, type McpRouteContext } from "./McpRoute.js"
import { healthy, refuse } from "./Responses.js"
import { makeSessions } from "./Sessions.js"

export const MCP_PATH = "/mcp"
export const HEALTH_PATH = "/healthz"

export interface HttpServeOptions {
  readonly settings: HttpSettings
  readonly token: string | undefined
  readonly maxBodyBytes: number
  readonly maxBodyMemoryBytes: number
  /** A fresh SDK Server with the whole tool surface (McpServer.make): one per session. */
  readonly make: () => Server
}

/** The port could not be bound (in use, not permitted): reported by errno code only. */
export class HttpListenFailed extends Data.TaggedError("HttpListenFailed")<{ readonly code: string }> {}

/**
 * serverfs-mcp over Streamable HTTP as a scoped resource: listening once acquired; on release
 * (SIGTERM/SIGINT interrupt the program) it stops accepting, lets the POSTs in flight finish
 * within the shutdown grace, then closes every session and connection.
 */
export const serveHttp = (
  options: HttpServeOptions
): Effect.Effect<void, HttpListenFailed, AuditLog | AuditSink | Scope.Scope> =>
  Effect.gen(function* () {
    const { settings } = options
    const audit = yield* AuditLog
    const sink = yield* AuditSink
    const clock = yield* Effect.clock
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const now = () => clock.unsafeCurrentTimeMillis()
    const sessions = makeSessions()
    let draining = false
    let postsInFlight = 0
    let drained: (() => void) | undefined
    // Set once the port is known (0 asks for an ephemeral one).
    let context: McpRouteContext | undefined

    // Node's own bounds: no slowloris (the head and the whole request must arrive in time, checked
    // every second rather than Node's default 30 s), no huge head, no idle keep-alive hoarding.
    const headersTimeout = Math.min(settings.headersTimeoutSeconds, settings.requestTimeoutSeconds) * 1000
    const server = http.createServer({
      headersTimeout,
      requestTimeout: settings.requestTimeoutSeconds * 1000,
      keepAliveTimeout: settings.keepAliveTimeoutSeconds * 1000,
      maxHeaderSize: settings.maxHeaderBytes,
      connectionsCheckingInterval: 1000
    })
    // Every connection holds a descriptor: they are capped, and one that has not delivered a
    // request head within the head timeout is closed. Node's own head timeout only starts at the
    // first byte, so a client that connects and stays silent would otherwise hold its place (and,
    // at the cap, lock everyone out) forever. Idle keep-alive connections end by keepAliveTimeout.
    server.maxConnections = settings.maxConnections
    const answered = new WeakSet<object>()
    server.on("connection", (socket) => {
      // A per-socket deadline, unref'd so it never keeps the process alive: a Node timer, not
      // the Clock, like Node's own head timeout it stands next to.
      const deadline = setTimeout(() => {
        if (!answered.has(socket)) socket.destroy()
      }, headersTimeout + 1000)
      deadline.unref()
      socket.once("close", () => clearTimeout(deadline))
    })
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      answered.add(req.socket)
      const url = new URL(req.url ?? "/", "http://localhost")
      if (draining || context === undefined) {
        refuse(res, 503, "Service Unavailable: the server is shutting down", {}, true)
        return
      }
      // The contract's order: Host, Origin, then the token (not for the readiness path).
      const refusal = checkRequest(
        url.pathname === HEALTH_PATH ? { ...context.guards, tokenDigest: undefined } : context.guards,
        req.headers
      )
      if (refusal !== undefined) {
        refuse(res, refusal.status, refusal.message, refusal.headers)
        return
      }
      if (url.pathname === HEALTH_PATH) {
        if (req.method === "GET" || req.method === "HEAD") healthy(res, req.method)
        else refuse(res, 405, "Method Not Allowed", { allow: "GET, HEAD" })
        return
      }
      if (url.pathname !== MCP_PATH) {
        refuse(res, 404, "Not Found")
        return
      }
      if (req.method === "POST") {
        // Counted from receipt (before its body is read), so a SIGTERM cannot fall between the
        // request's arrival and its call: the shutdown waits for every POST counted here.
        postsInFlight++
        res.once("close", () => {
          if (--postsInFlight === 0 && draining) drained?.()
        })
        runFork(audit.emit("DEBUG", "http_request", { transport: "http", method: "POST" }))
      }
      handleMcp(context, req, res).catch(() => refuse(res, 500, "Internal Server Error", {}, true))
    })
    server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
      // A malformed, oversized or too slow request: answer if the socket still can, then close.
      const status =
        error.code === "HPE_HEADER_OVERFLOW"
          ? "431 Request Header Fields Too Large"
          : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
            ? "408 Request Timeout"
            : "400 Bad Request"
      if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
      else socket.destroy()
    })

    const listening = Effect.async<AddressInfo, HttpListenFailed>((resume) => {
      const onError = (error: NodeJS.ErrnoException) =>
        resume(Effect.fail(new HttpListenFailed({ code: error.code ?? "unknown" })))
      server.once("error", onError)
      server.listen(settings.port, settings.host, () => {
        server.off("error", onError)
        resume(Effect.succeed(server.address() as AddressInfo))
      })
    })

    const shutdown = Effect.gen(function* () {
      yield* audit.emit("INFO", "shutdown_requested", {
        transport: "http",
        sessions: sessions.count(),
        requests_in_flight: postsInFlight
      })
      draining = true
      server.close()
      server.closeIdleConnections()
      // Calls in flight answer first (bounded by the grace), then every session closes.
      yield* Effect.async<void>((resume) => {
        if (postsInFlight === 0) resume(Effect.void)
        else drained = () => resume(Effect.void)
      }).pipe(Effect.timeout(Duration.seconds(settings.shutdownGraceSeconds)), Effect.ignore)
      yield* Effect.promise(() => sessions.closeAll())
      server.closeAllConnections()
      yield* audit.emit("INFO", "shutdown", { reason: "signal", transport: "http" })
    })

    const address = yield* Effect.acquireRelease(
      listening.pipe(
        Effect.tapError((e) => audit.emit("ERROR", "http_listen_failed", { transport: "http", code: e.code }))
      ),
      () => shutdown
    )
    context = {
      guards: guardPolicy(allowedHostsFor(settings, address.port), settings.allowedOrigins, options.token),
      sdkHosts: [...allowedHostsFor(settings, address.port)],
      sdkOrigins: [...settings.allowedOrigins],
      settings,
      maxBodyBytes: options.maxBodyBytes,
      bodyBudget: makeBodyBudget(options.maxBodyMemoryBytes),
      sessions,
      make: options.make,
      now,
      newSessionId: randomUUID
    }

    // Idle expiry on the Clock: a session with nothing in flight and no request for the idle time
    // is closed (its SDK server freed); checked at a fraction of the idle time.
    const idleMillis = settings.sessionIdleSeconds * 1000
    const sweep = Effect.promise(() =>
      Promise.all(sessions.idleSince(now() - idleMillis).map((id) => sessions.close(id)))
    )
    yield* sweep.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.min(Math.max(idleMillis / 4, 250), 10_000)))),
      Effect.forkScoped
    )

    // The contract's listening line: written whatever the log level, tests and operators read the
    // real port from it.
    sink.write(
      JSON.stringify({
        timestamp: DateTime.formatIso(DateTime.unsafeMake(now())),
        level: "INFO",
        event: "http_listening",
        transport: "http",
        host: settings.host,
        port: address.port,
        path: MCP_PATH
      })
    )
  })
