import * as fs from "node:fs"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { AuditSink } from "@serverfs/telemetry-local"
import { ConfigProvider, Effect, Exit, Fiber, Layer, ManagedRuntime } from "effect"
import { McpServerLayer } from "../../src/Layers.js"
import { McpServer } from "../../src/McpServer.js"

/**
 * Two MCP clients served by ONE server (one process, one event loop, one service graph), the
 * way every HTTP session shares serverfs-mcp: what one client's hostile call does to the
 * process, the other client feels. Each client gets its own SDK `Server` through
 * `McpServer.serve`, exactly as a transport connection does in production.
 */
export interface SharedServer {
  readonly clients: ReadonlyArray<Client>
  readonly close: () => Promise<void>
}

export const startSharedServer = async (
  env: Record<string, string>,
  clientCount = 2
): Promise<SharedServer> => {
  const layer = McpServerLayer.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
    Layer.provideMerge(AuditSink.memory().layer)
  )
  const runtime = ManagedRuntime.make(layer)
  const server = await runtime.runPromise(McpServer)
  const clients: Client[] = []
  const fibers: Array<Fiber.RuntimeFiber<void, unknown>> = []
  for (let i = 0; i < clientCount; i++) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    fibers.push(runtime.runFork(server.serve(serverSide, () => undefined)))
    const client = new Client({ name: `hostile-test-${i}`, version: "0.0.0" })
    await client.connect(clientSide)
    clients.push(client)
  }
  return {
    clients,
    close: async () => {
      for (const client of clients) await client.close().catch(() => undefined)
      for (const fiber of fibers) await runtime.runPromise(Fiber.interrupt(fiber).pipe(Effect.asVoid))
      await runtime.dispose()
    }
  }
}

/** When a promise settled, in ms since `t0`, and how. */
export interface Settled<T> {
  readonly at: number
  readonly exit: Exit.Exit<T, unknown>
}

const timed = <T>(t0: number, promise: Promise<T>): Promise<Settled<T>> =>
  promise.then(
    (value) => ({ at: performance.now() - t0, exit: Exit.succeed(value) }),
    (error: unknown) => ({ at: performance.now() - t0, exit: Exit.fail(error) })
  )

/**
 * A bystander's answer is due before the hostile call has ended, or — when the hostile call is
 * itself quick — within this many ms of being asked: a liveness bound, not a timing.
 */
export const BYSTANDER_BOUND_MS = 3_000

/**
 * Start `hostile`, then at once ask every `bystander` (list_workdirs on the same connection and
 * on another client); resolve with when each settled.
 */
export const underAttack = async <T>(
  hostile: () => Promise<T>,
  bystanders: ReadonlyArray<() => Promise<unknown>>
): Promise<{ readonly hostile: Settled<T>; readonly bystanders: ReadonlyArray<Settled<unknown>> }> => {
  const t0 = performance.now()
  const attack = timed(t0, hostile())
  // Give the hostile request a head start so that it is being worked on when the others arrive.
  await new Promise((resolve) => setTimeout(resolve, 20))
  const others = bystanders.map((ask) => timed(t0, ask()))
  return { hostile: await attack, bystanders: await Promise.all(others) }
}

/** The peak resident set of a process (VmHWM), in bytes. */
export const peakRss = (pid: number): number => {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024
}
