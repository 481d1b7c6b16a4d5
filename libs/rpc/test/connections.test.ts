/**
 * The bridge socket bounds its connections (issue 14, item 11): 1,100 idle connections of the
 * bridge's own user used to exhaust its descriptors and block real calls. Connections are now
 * limited in number — a new one takes the place of the one idle the longest, so idle
 * connections never lock out a real call — and in idle time: no complete request (or an unread
 * answer) for the idle timeout closes the connection; a request being handled is never idle.
 */
import net from "node:net"
import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeBridgeClient, serveRpc } from "../src/index.js"
import { rawExchange, recordingHandler, requestLine, SAMPLE_RESULTS, tempBase } from "./fixtures.js"

const own = { uid: null, gid: null } as const

interface Idle {
  readonly socket: net.Socket
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>
}

/** Open `count` connections one after the other, each connected before the next; send nothing. */
const openIdle = (socketPath: string, count: number, payload = "") =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const out: Array<Idle> = []
      for (let i = 0; i < count; i++) {
        const socket = net.createConnection({ path: socketPath })
        socket.on("error", () => {})
        const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
        await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
        if (payload !== "") socket.write(payload)
        out.push({ socket, closed })
      }
      return out
    }),
    (idle) =>
      Effect.sync(() => {
        for (const c of idle) c.socket.destroy()
      })
  )

const isOpen = (c: Idle) => !c.socket.destroyed && c.socket.readyState === "open"

describe("connection limit", () => {
  it.scopedLive(
    "1,100 idle connections do not block a real call: it is answered, the longest idle ones made room",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const socketPath = path.join(base, "bridge.sock")
        const { handle } = recordingHandler()
        yield* serveRpc({ socketPath, allowedPeer: own, handle, maxConnections: 16 })
        const idle = yield* openIdle(socketPath, 1_100)
        const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
        expect(yield* client.call("runtime.list", {})).toEqual(SAMPLE_RESULTS["runtime.list"])
        // The oldest were closed by the server, in order, without a word; at most 16 remain.
        yield* Effect.promise(() => Promise.all(idle.slice(0, 1_100 - 15).map((c) => c.closed)))
        expect(idle.filter(isOpen).length).toBeLessThanOrEqual(15)
      })
  )

  it.scopedLive(
    "every connection has a request in flight → the new one gets one BRIDGE_CLOSED line and is closed",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const socketPath = path.join(base, "bridge.sock")
        const gate = yield* Deferred.make<void>()
        const started = yield* Deferred.make<void>()
        let inFlight = 0
        const { handle } = recordingHandler((method) =>
          Effect.gen(function* () {
            if (++inFlight === 2) yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(gate)
            return SAMPLE_RESULTS[method]
          })
        )
        yield* serveRpc({ socketPath, allowedPeer: own, handle, maxConnections: 2 })
        const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
        const busy = yield* Effect.fork(
          Effect.all([client.call("runtime.list", {}), client.call("runtime.list", {})], { concurrency: 2 })
        )
        yield* Deferred.await(started)
        const refused = yield* rawExchange(socketPath, requestLine({}), "close")
        expect(refused.closed).toBe(true)
        expect(refused.lines).toEqual([
          {
            request_id: null,
            ok: false,
            error: { code: "BRIDGE_CLOSED", message: "the Agent Bridge has 2 connections open; try again" }
          }
        ])
        // Through the client it is that code, verbatim.
        const viaClient = yield* Effect.flip(client.call("runtime.list", {}))
        expect(viaClient._tag).toBe("BRIDGE_CLOSED")
        // The calls in flight are not disturbed.
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.join(busy)).toEqual([
          SAMPLE_RESULTS["runtime.list"],
          SAMPLE_RESULTS["runtime.list"]
        ])
      })
  )
})

describe("idle timeout", () => {
  it.scopedLive(
    "a connection that sends nothing, or only part of a line, is closed after the idle timeout",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const socketPath = path.join(base, "bridge.sock")
        const { handle } = recordingHandler()
        yield* serveRpc({ socketPath, allowedPeer: own, handle, idleTimeoutSeconds: 1 })
        const silent = yield* openIdle(socketPath, 3)
        const partial = yield* openIdle(socketPath, 3, '{"protocol_version":1,')
        // Liveness bound: closed well within seconds, by the server.
        yield* Effect.promise(() => Promise.all([...silent, ...partial].map((c) => c.closed))).pipe(
          Effect.timeoutFail({
            duration: "10 seconds",
            onTimeout: () => "idle connections stayed open"
          })
        )
      })
  )

  it.scopedLive("a request handled for longer than the idle timeout is not idle: it is answered", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const { handle } = recordingHandler((method) =>
        Effect.as(Effect.sleep("2500 millis"), SAMPLE_RESULTS[method])
      )
      yield* serveRpc({ socketPath, allowedPeer: own, handle, idleTimeoutSeconds: 1 })
      const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
      expect(yield* client.call("runtime.list", {})).toEqual(SAMPLE_RESULTS["runtime.list"])
    })
  )

  it.scopedLive("a long-lived client keeps working across idle closes (one connection per call)", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const { calls, handle } = recordingHandler()
      yield* serveRpc({ socketPath, allowedPeer: own, handle, idleTimeoutSeconds: 1, maxConnections: 2 })
      const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
      yield* client.call("runtime.list", {})
      // Idle connections come and go meanwhile; the client's next calls are answered.
      const idle = yield* openIdle(socketPath, 2)
      yield* Effect.promise(() => Promise.all(idle.map((c) => c.closed)))
      yield* client.call("runtime.list", {})
      yield* client.call("runtime.list", {})
      expect(calls).toHaveLength(3)
    })
  )
})
