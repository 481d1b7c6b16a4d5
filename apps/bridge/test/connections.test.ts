/**
 * The real bridge's socket under a flood of idle connections (issue 14, item 11): 1,100 idle
 * connections of the bridge's own user exhausted its descriptors and blocked real calls. With a
 * descriptor limit of 256 (as a small service limit would set it), the default connection limit
 * (64) keeps the bridge within it: a real call is answered, and the idle connections are closed
 * after the (here short) idle timeout.
 */
import * as net from "node:net"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  assertBuilt,
  call,
  killAll,
  makeSandbox,
  type Sandbox,
  startBridge,
  submitParams,
  waitForStatus
} from "./support/daemon.js"

let sandbox: Sandbox
const opened: Array<net.Socket> = []

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy()
  await killAll()
  sandbox?.remove()
})

describe("the bridge socket", () => {
  it("1,100 idle connections (descriptor limit 256) do not block a real call; idle ones are closed after the idle timeout", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    const bridge = await startBridge(sandbox.env({ SERVERFS_AGENT_CONNECTION_IDLE_SECONDS: "3" }), 45_000, {
      maxOpenFiles: 256
    })
    const closed: Array<Promise<void>> = []
    for (let i = 0; i < 1_100; i++) {
      const socket = net.createConnection({ path: sandbox.socketPath })
      socket.on("error", () => {})
      opened.push(socket)
      closed.push(new Promise<void>((resolve) => socket.once("close", () => resolve())))
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
      // A connection counts once the bridge accepted it, and each one it accepts over the limit
      // closes the one idle the longest: waiting for an older one's close keeps this loop from
      // overrunning the socket's accept backlog (connect would fail with EAGAIN).
      if (i >= 200) await closed[i - 200]
    }
    // Real calls are answered while the idle connections are still there.
    const runtimes = await call(bridge.client, "runtime.list", {})
    expect(runtimes.runtimes.map((r) => r.name)).toContain("fake")
    const task = await call(bridge.client, "task.submit", submitParams({ prompt: "complete:done" }, "w1"))
    expect((await waitForStatus(bridge.client, task.task_id, "succeeded")).final_response).toBe("done")
    // Every idle connection is closed by the bridge (the liveness bound is generous).
    await Promise.race([
      Promise.all(closed),
      new Promise((_, reject) => setTimeout(() => reject(new Error("idle connections stayed open")), 30_000))
    ])
    expect(bridge.proc.exitCode).toBeNull()
  })
})
