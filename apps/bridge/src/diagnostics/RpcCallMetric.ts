import type { RpcHandler } from "@serverfs/rpc"
import { AgentMetrics } from "@serverfs/telemetry-local"
import { Clock, Effect } from "effect"
import { rpcOutcomeOf } from "./Outcomes.js"

/**
 * Every bridge method counted once per call (serverfs_bridge_rpc_calls_total / _duration): its
 * method name from the contract, its outcome — ok, the frozen code it failed with, or fault —
 * and how long the handler ran. The labels are closed vocabularies; the call's params never
 * reach a label. Fail-open: a metric defect is logged and the call's answer stands.
 */
export const countedRpc =
  (handle: RpcHandler): RpcHandler =>
  (method, params) =>
    Effect.flatMap(Clock.currentTimeNanos, (start) =>
      Effect.onExit(handle(method, params), (exit) =>
        Effect.suspend(() =>
          Effect.flatMap(Clock.currentTimeNanos, (now) =>
            AgentMetrics.rpcCall(method, rpcOutcomeOf(exit), Number(now - start) / 1e9)
          )
        ).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.logWarning("the RPC call metric failed; the call is unaffected", {
              defect: String(defect)
            })
          )
        )
      )
    )
