/**
 * The bridge's service graph in the test process (the same layers main.ts builds), on real
 * directories, a real SQLite file and real lock files. Configuration comes from a map instead of
 * the environment; audit lines go to memory. `adapters` replaces the runtime registry, for
 * provider shapes the scripted runtime never produces; `leases` wraps the real writer leases, for
 * lock-directory failures a test cannot cause on disk as root; `observation` swaps the
 * diagnostics recorder or the metric projection, for fault injection; `store` wraps the real
 * store, to see which calls (and so which transactions) a flow makes.
 */
import type { ProviderAdapter } from "@serverfs/adapters"
import type { RuntimeInfo } from "@serverfs/domain"
import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { type BridgeClientService, makeBridgeClient, serveRpc } from "@serverfs/rpc"
import { ResultSpool, TaskStore, type TaskStoreShape } from "@serverfs/store"
import { AuditLog, AuditSink, type DiagnosticsRecorder } from "@serverfs/telemetry-local"
import { WorkdirRoots } from "@serverfs/workspace"
import { ConfigProvider, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import {
  BridgeLeases,
  BridgeSettingsTag,
  MetricProjection,
  type MetricProjectionService,
  RuntimeRegistry,
  rpcHandlers,
  StoreFromSettings,
  TaskPlaneLayer,
  TaskService,
  taskPlaneWith
} from "../../src/index.js"

export interface ObservationOverrides {
  readonly recorder?: Layer.Layer<DiagnosticsRecorder>
  readonly metrics?: MetricProjectionService
}

export const registryOf = (adapters: ReadonlyArray<ProviderAdapter>): Layer.Layer<RuntimeRegistry> =>
  Layer.succeed(
    RuntimeRegistry,
    RuntimeRegistry.make({
      get: (name: string) => adapters.find((a) => a.name === name),
      list: (): Effect.Effect<ReadonlyArray<RuntimeInfo>> => Effect.forEach(adapters, (a) => a.probe()),
      names: () => adapters.map((a) => a.name).sort((a, b) => a.localeCompare(b))
    })
  )

export const inProcessBridge = (
  env: Readonly<Record<string, string>>,
  adapters?: ReadonlyArray<ProviderAdapter>,
  leases?: (real: BridgeLeases) => BridgeLeases,
  observation: ObservationOverrides = {},
  store?: (real: TaskStoreShape) => TaskStoreShape
) => {
  const storeLayer =
    store === undefined
      ? StoreFromSettings
      : Layer.merge(
          Layer.effect(TaskStore, Effect.map(TaskStore, store)),
          Layer.effect(ResultSpool, ResultSpool)
        ).pipe(Layer.provide(StoreFromSettings))
  const leasesLayer =
    leases === undefined
      ? BridgeLeases.Default
      : Layer.effect(BridgeLeases, Effect.map(BridgeLeases, leases)).pipe(Layer.provide(BridgeLeases.Default))
  const audit = AuditSink.memory()
  // The production task plane; only the leaves (runtimes, leases, configuration, audit) differ.
  const plane = observation.recorder === undefined ? TaskPlaneLayer : taskPlaneWith(observation.recorder)
  const layer = plane.pipe(
    Layer.provideMerge(adapters === undefined ? RuntimeRegistry.Default : registryOf(adapters)),
    Layer.provideMerge(leasesLayer),
    Layer.provideMerge(storeLayer),
    Layer.provideMerge(WorkdirRoots.Default),
    Layer.provideMerge(WorkdirRegistry.Default),
    Layer.provideMerge(AuditLog.Default),
    Layer.provideMerge(BridgeSettingsTag.layer),
    Layer.provideMerge(Configuration.Default),
    Layer.provide(
      observation.metrics === undefined ? Layer.empty : Layer.succeed(MetricProjection, observation.metrics)
    ),
    Layer.provide(audit.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )
  return { layer, auditLines: audit.lines }
}

export interface InProcessServer {
  readonly client: BridgeClientService
  readonly auditLines: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/**
 * The service graph plus the real RPC server on `socketPath`, in this process: the same
 * handlers main.ts serves, reached through the real client — with adapters of the test's choice.
 */
export const serveInProcess = async (
  env: Readonly<Record<string, string>>,
  socketPath: string,
  adapters: ReadonlyArray<ProviderAdapter>,
  observation: ObservationOverrides = {}
): Promise<InProcessServer> => {
  const { layer, auditLines } = inProcessBridge(env, adapters, undefined, observation)
  const runtime = ManagedRuntime.make(layer)
  const scope = Effect.runSync(Scope.make())
  try {
    await runtime.runPromise(
      Effect.flatMap(TaskService, (tasks) =>
        Scope.extend(
          serveRpc({ socketPath, allowedPeer: { uid: null, gid: null }, handle: rpcHandlers(tasks) }),
          scope
        )
      )
    )
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  return {
    client: makeBridgeClient({ socketPath, timeoutSeconds: 30 }),
    auditLines,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await runtime.dispose()
    }
  }
}
