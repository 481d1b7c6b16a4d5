import { Configuration } from "@serverfs/policy"
import { BridgeClient } from "@serverfs/rpc"
import { Effect, Layer } from "effect"

/**
 * The CLI's way to the bridge: the same client, socket and timeout serverfs-mcp uses (from the
 * configuration), so the CLI goes through the bridge's peer check like any other caller and never
 * opens the store itself. The client connects per call: building it touches nothing.
 */
export const BridgeConnection = Layer.unwrapEffect(
  Effect.map(Configuration, ({ global }) =>
    BridgeClient.layer({
      socketPath: global.agentBridgeSocket,
      timeoutSeconds: global.agentBridgeTimeoutSeconds
    })
  )
)
