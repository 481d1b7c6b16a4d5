import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { TaskStore } from "@serverfs/store"
import { AuditLog, JsonLoggerLive } from "@serverfs/telemetry-local"
import { WorkdirRoots } from "@serverfs/workspace"
import { Effect, Layer } from "effect"
import { BridgeSettingsTag } from "./BridgeSettingsTag.js"
import { InstanceLockLive } from "./InstanceLock.js"
import { BridgeLeases } from "./leases/BridgeLeases.js"
import { RuntimeRegistry } from "./RuntimeRegistry.js"
import { TaskService } from "./tasks/TaskService.js"

/**
 * The bridge's service graph. Like the MCP server's, it needs an AuditSink and reads
 * configuration through the ambient ConfigProvider (the same variables and .env file).
 */
const AuditLogFromConfiguration = Layer.unwrapEffect(
  Effect.map(Configuration, ({ global }) =>
    Layer.effectDiscard(AuditLog.setLevel(global.logLevel)).pipe(Layer.provideMerge(AuditLog.Default))
  )
)

const StoreFromSettings = Layer.unwrapEffect(
  Effect.map(BridgeSettingsTag, (settings) => TaskStore.layer({ stateDir: settings.stateDir }))
)

export const BridgeLayer = TaskService.Default.pipe(
  Layer.provideMerge(RuntimeRegistry.Default),
  Layer.provideMerge(BridgeLeases.Default),
  Layer.provideMerge(StoreFromSettings),
  // Built before the store and the leases: nothing reads or writes state without the lock.
  Layer.provideMerge(InstanceLockLive),
  Layer.provideMerge(WorkdirRoots.Default),
  Layer.provideMerge(WorkdirRegistry.Default),
  Layer.provideMerge(AuditLogFromConfiguration),
  Layer.provideMerge(BridgeSettingsTag.layer),
  Layer.provideMerge(Configuration.Default),
  Layer.provideMerge(JsonLoggerLive)
)
