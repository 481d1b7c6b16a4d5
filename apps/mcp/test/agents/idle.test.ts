import * as net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { scopedAgentStack } from "@serverfs/testkit"
import { Effect } from "effect"
import { ok, submit, waitForEnd } from "./support.js"

/**
 * A long-lived serverfs-mcp keeps working when the bridge closes idle connections (issue 14):
 * its BridgeClient opens one connection per call, so the bridge's idle timeout
 * (SERVERFS_AGENT_CONNECTION_IDLE_SECONDS, 1 s here) never cuts a call of it.
 */
describe("idle connections to the bridge", () => {
  it.scopedLive(
    "after the bridge closed an idle connection, the same serverfs-mcp's calls are still answered",
    () =>
      Effect.gen(function* () {
        const stack = yield* scopedAgentStack({
          prefix: "serverfs-agent-idle-",
          env: () => ({ SERVERFS_AGENT_CONNECTION_IDLE_SECONDS: "1" })
        })
        yield* Effect.promise(async () => {
          expect(await ok(stack.client, "list_agent_runtimes")).toHaveProperty("runtimes")
          // An idle connection of our own: its close by the bridge is the signal that the idle
          // timeout has passed and the bridge acted on it.
          const idle = net.createConnection({ path: `${stack.tree.base}/run/bridge.sock` })
          idle.on("error", () => {})
          await new Promise<void>((resolve) => idle.once("close", () => resolve()))
          expect(await ok(stack.client, "list_agent_runtimes")).toHaveProperty("runtimes")
          const taskId = await submit(stack.client, "complete:still here")
          expect((await waitForEnd(stack.client, taskId, ["succeeded"])).final_response).toBe("still here")
        })
      }),
    120_000
  )
})
