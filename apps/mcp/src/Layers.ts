import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { BridgeClient } from "@serverfs/rpc"
import { AuditLog, JsonLoggerLive } from "@serverfs/telemetry-local"
import {
  BinaryTransfer,
  type FileIngress,
  FileIngressDisabledLayer,
  LeaseManager,
  Mutations,
  ReadChannels,
  WorkdirRoots
} from "@serverfs/workspace"
import { Effect, Layer } from "effect"
import { fileIngressLayer } from "./ingress/FileIngressLive.js"
import { McpServer } from "./McpServer.js"

/**
 * The MCP server's service graph. It needs an AuditSink and reads configuration through the
 * ambient ConfigProvider: the app provides stderr and the environment (+ .env file), tests
 * provide memory and a map.
 */
const AuditLogFromConfiguration = Layer.unwrapEffect(
  Effect.map(Configuration, ({ global }) =>
    Layer.effectDiscard(AuditLog.setLevel(global.logLevel)).pipe(Layer.provideMerge(AuditLog.Default))
  )
)

/** The bridge client; it connects per call, so building it never touches the socket. */
const BridgeClientFromConfiguration = Layer.unwrapEffect(
  Effect.map(Configuration, ({ global }) =>
    BridgeClient.layer({
      socketPath: global.agentBridgeSocket,
      timeoutSeconds: global.agentBridgeTimeoutSeconds
    })
  )
)

/** The file ingress: off unless SERVERFS_FILE_INGRESS_ENABLED; never with a test allowance. */
const FileIngressFromConfiguration = Layer.unwrapEffect(
  Effect.map(Configuration, ({ global }) =>
    global.fileIngressEnabled
      ? fileIngressLayer({
          allowedHosts: global.fileIngressAllowedHosts,
          allowOpenaiBlobHosts: global.fileIngressAllowOpenaiBlobHosts,
          maxRedirects: global.fileIngressMaxRedirects,
          fetchTimeoutSeconds: global.fileIngressFetchTimeoutSeconds,
          timeoutSeconds: global.fileIngressTimeoutSeconds
        })
      : FileIngressDisabledLayer
  )
)

/**
 * The service graph with a given file ingress: production passes the configured one; a test
 * passes one with its loopback allowance (which no configuration can set).
 */
export const mcpServerLayerWith = (fileIngress: Layer.Layer<FileIngress, never, Configuration>) =>
  McpServer.Default.pipe(
    Layer.provideMerge(BridgeClientFromConfiguration),
    Layer.provideMerge(BinaryTransfer.Default),
    Layer.provideMerge(fileIngress),
    Layer.provideMerge(Layer.merge(ReadChannels.Default, Mutations.Default)),
    Layer.provideMerge(LeaseManager.Default),
    Layer.provideMerge(WorkdirRoots.Default),
    Layer.provideMerge(WorkdirRegistry.Default),
    Layer.provideMerge(AuditLogFromConfiguration),
    Layer.provideMerge(Configuration.Default),
    Layer.provideMerge(JsonLoggerLive)
  )

export const McpServerLayer = mcpServerLayerWith(FileIngressFromConfiguration)
