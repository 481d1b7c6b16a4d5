import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import {
  Configuration,
  EnvironmentConfigProvider,
  exitTeardown,
  loadHttpSettings,
  maxBodyBytesFor,
  maxBodyMemoryBytesFor,
  type ProgramExit
} from "@serverfs/policy"
import { AuditLog, AuditSink, JsonLoggerLive } from "@serverfs/telemetry-local"
import { DateTime, Effect, Layer } from "effect"
import { withClientVisibleExitCode } from "./ConfigurationErrorReply.js"
import { McpServerLayer } from "./Layers.js"
import { McpServer } from "./McpServer.js"
import { startupFields } from "./StartupLog.js"

/**
 * serverfs-mcp's server. main.ts starts it by importing this module; the shipped bundle runs this
 * module's own CommonJS bundle with V8's code cache instead (scripts/bundle.mjs). It serves MCP
 * over stdio (the default) or Streamable HTTP (SERVERFS_MCP_TRANSPORT=http, http/HttpServer.ts).
 * stdout carries protocol frames only (nothing at all over HTTP); every log line is JSON on
 * stderr. Exit codes: 0 on stdin EOF (stdio) or SIGTERM/SIGINT, 2 on a configuration error (one
 * line: `ServerFS: configuration error: <VARIABLE>: <problem>`, and the same line as the
 * JSON-RPC error answering a stdio client's first request: ConfigurationErrorReply.ts), 1
 * otherwise.
 */
const program = Effect.gen(function* () {
  const server = yield* McpServer
  const audit = yield* AuditLog
  const configuration = yield* Configuration
  // Read for both transports: a bad SERVERFS_MCP_TRANSPORT stops startup like any other value.
  const http = yield* loadHttpSettings(configuration.global)
  // The catalog marker in the startup line lets an operator match a log to a server_info answer.
  yield* audit.emit("INFO", "startup", {
    ...startupFields(configuration),
    tools: server.tools.length,
    catalog_marker: server.marker
  })
  // A misspelled variable would otherwise fall back to its default without a word.
  if (configuration.unknownVariables.length > 0)
    yield* audit.emit("WARNING", "unknown_variables", { names: configuration.unknownVariables })
  if (http.settings.transport === "http") {
    // Loaded only here: the HTTP stack (Hono's node server, the SDK's Streamable HTTP transport)
    // is not part of a stdio server's start-up (docs/performance.md, "Cold start and memory").
    const { serveHttp } = yield* Effect.promise(() => import("./http/HttpServer.js"))
    // Serves until SIGTERM/SIGINT interrupts it; the scope's release drains and closes it.
    return yield* Effect.scoped(
      Effect.zipRight(
        serveHttp({
          settings: http.settings,
          token: http.token,
          maxBodyBytes: maxBodyBytesFor(http.settings, configuration.global),
          maxBodyMemoryBytes: maxBodyMemoryBytesFor(http.settings, configuration.global),
          make: server.make
        }),
        Effect.never
      )
    )
  }
  yield* server
    .serve(new StdioServerTransport(), (onClosed) => {
      // The SDK's stdio transport does not end on stdin EOF; the server's life does.
      process.stdin.once("end", onClosed)
      process.stdin.once("close", onClosed)
    })
    .pipe(Effect.onInterrupt(() => audit.emit("INFO", "shutdown", { reason: "signal" })))
  yield* audit.emit("INFO", "shutdown", { reason: "stdin closed" })
})

// The JSON logger and the stderr sink wrap everything, so not even a failure report reaches stdout.
const MainLive = McpServerLayer.pipe(
  Layer.provide(EnvironmentConfigProvider(process.env)),
  Layer.provideMerge(JsonLoggerLive),
  Layer.provideMerge(AuditSink.stderr)
)

// Exit explicitly even after success: the SDK's stdin listener would otherwise keep an idle
// process alive.
const exitPolicy: ProgramExit = {
  auditConfigurationErrors: true,
  exitOnSuccess: true,
  interruptedExitCode: 0,
  otherFailure: (_cause, now) =>
    `${JSON.stringify({ timestamp: DateTime.formatIso(now), level: "ERROR", event: "startup_failed", reason: "unexpected failure" })}\n`
}

NodeRuntime.runMain(withClientVisibleExitCode(program.pipe(Effect.provide(MainLive)), exitPolicy), {
  disablePrettyLogger: true,
  disableErrorReporting: true,
  teardown: exitTeardown(exitPolicy)
})
