import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { isFrozenError } from "@serverfs/domain"
import {
  Configuration,
  ConfigurationError,
  EnvironmentConfigProvider,
  exitTeardown,
  type ProgramExit,
  withExitCode
} from "@serverfs/policy"
import { serveRpc } from "@serverfs/rpc"
import { AuditLog, AuditSink } from "@serverfs/telemetry-local"
import { Cause, Effect, Layer, Option } from "effect"
import { BridgeSettingsTag } from "./BridgeSettingsTag.js"
import { releaseHeapWhenIdle } from "./IdleHeap.js"
import { BridgeLayer } from "./Layers.js"
import { rpcHandlers } from "./RpcHandlers.js"
import { RuntimeRegistry } from "./RuntimeRegistry.js"
import { BRIDGE_VERSION } from "./tasks/ManifestBuilder.js"
import { TaskService } from "./tasks/TaskService.js"

/**
 * serverfs-bridge: the Agent Bridge daemon. It reads the same configuration as serverfs-mcp,
 * binds its Unix socket, reconciles what a previous process left (never re-running anything),
 * then answers NDJSON RPC v1 until SIGTERM/SIGINT: it stops accepting, interrupts live turns
 * honestly (BRIDGE_SHUTDOWN), releases leases and removes its socket. Logs are JSON on stderr,
 * without prompts, results or secrets.
 *
 * Exit codes: 0 after a signal, 2 on a configuration error, 1 when the environment refuses it
 * (socket, lock or state directory unsafe or in use — another bridge on the same state or lock
 * directory included).
 */

/** Checked before the service graph is built: a disabled bridge creates no lock file or state. */
const requireEnabled = Effect.gen(function* () {
  const { global } = yield* Configuration
  if (!global.agentBridgeEnabled) {
    return yield* new ConfigurationError({
      variable: "SERVERFS_AGENT_BRIDGE_ENABLED",
      problem: "must be true to run serverfs-bridge"
    })
  }
})

/**
 * The bridge's one feature: the RPC endpoint, opened after the instance lock and the service
 * graph, answering only once restart reconciliation is done. Its scope is the daemon's life.
 */
const RpcEndpointLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const { global, unknownVariables } = yield* Configuration
    const settings = yield* BridgeSettingsTag
    const tasks = yield* TaskService
    const audit = yield* AuditLog
    const registry = yield* RuntimeRegistry
    // A misspelled variable would otherwise fall back to its default without a word.
    if (unknownVariables.length > 0)
      yield* audit.emit("WARNING", "unknown_variables", { names: unknownVariables })
    // A second bridge on the same state or lock directory never gets here: the instance lock
    // (InstanceLock.ts, taken while the layers are built) refused it. The socket is bound before
    // reconciliation: a second bridge started on a socket a live bridge serves is refused
    // (SOCKET_PATH_IN_USE) before it could interrupt that bridge's tasks or remove its guards.
    // Requests that arrive meanwhile wait until reconciliation is done.
    const reconciled = yield* Effect.makeLatch(false)
    const handle = rpcHandlers(tasks)
    yield* serveRpc({
      socketPath: global.agentBridgeSocket,
      allowedPeer: { uid: settings.peerUid, gid: settings.peerGid },
      ...(settings.peerGid === null ? {} : { sharedGid: settings.peerGid }),
      maxConnections: settings.maxConnections,
      idleTimeoutSeconds: settings.connectionIdleSeconds,
      handle: (method, params) => Effect.zipRight(reconciled.await, handle(method, params))
    })
    yield* tasks.reconcileAtStartup
    yield* reconciled.open
    // Start-up's garbage is given back at the first idle second, each burst's after it ends.
    yield* releaseHeapWhenIdle
    yield* audit.emit("INFO", "bridge_started", {
      version: BRIDGE_VERSION,
      runtimes: registry.names(),
      shared_mode: settings.peerGid !== null
    })
    // Released first (the feature is built last): announced before the live tasks are stopped.
    yield* Effect.addFinalizer(() => audit.emit("INFO", "bridge_stopping", { reason: "signal" }))
  })
)

const MainLive = BridgeLayer.pipe(
  Layer.provide(EnvironmentConfigProvider(process.env)),
  Layer.provideMerge(AuditSink.stderr)
)

const ConfigurationLive = Configuration.Default.pipe(Layer.provide(EnvironmentConfigProvider(process.env)))

/** A refusal of the environment (socket, lock or state directory): its frozen code and message. */
const startupFailure = (cause: Cause.Cause<unknown>): string | undefined =>
  Option.getOrUndefined(
    Cause.failureOption(cause).pipe(
      Option.filter(isFrozenError),
      Option.map((e) => `ServerFS: bridge cannot start: ${e._tag}: ${e.message}\n`)
    )
  )

const exitPolicy: ProgramExit = {
  auditConfigurationErrors: true,
  exitOnSuccess: true,
  interruptedExitCode: 0,
  otherFailure: (cause) => startupFailure(cause) ?? "ServerFS: bridge failed unexpectedly\n"
}

// The daemon runs with Effect's tracer off: nothing in ServerFS exports or reads spans, and
// @effect/sql opens one for every statement and transaction (a span object, its attributes and
// the clock's reads), about 4 % of what the bridge allocates per task (issue 12,
// docs/performance.md). Every fiber forked below inherits the setting.
NodeRuntime.runMain(
  withExitCode(
    Effect.scoped(
      Effect.zipRight(
        Effect.provide(requireEnabled, ConfigurationLive),
        Layer.launch(RpcEndpointLive.pipe(Layer.provide(MainLive)))
      ).pipe(Effect.withTracerEnabled(false))
    ),
    exitPolicy
  ),
  { disablePrettyLogger: true, disableErrorReporting: true, teardown: exitTeardown(exitPolicy) }
)
