/**
 * The bridge side of the RPC: every method round-trips through the real client over a real
 * Unix socket, several requests share one connection and are answered in order, and the
 * handler's results, failures and defects become well-formed frames.
 */
import net from "node:net"
import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { AgentDisabled, AgentTaskNotFound, type BridgeMethod } from "@serverfs/domain"
import { Context, Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { makeBridgeClient, serveRpc } from "../src/index.js"
import {
  METHODS,
  rawExchange,
  recordingHandler,
  requestLine,
  SAMPLE_PARAMS,
  SAMPLE_RESULTS,
  tempBase
} from "./fixtures.js"

const own = { uid: null, gid: null } as const

describe("serveRpc + BridgeClient round trip", () => {
  it.scopedLive("every method round-trips: the handler gets decoded params, the client the result", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "run", "bridge.sock")
      const { calls, handle } = recordingHandler()
      yield* serveRpc({ socketPath, allowedPeer: own, handle })
      const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
      for (const method of METHODS) {
        const result = yield* client.call(method, SAMPLE_PARAMS[method] as never)
        expect(result, method).toEqual(SAMPLE_RESULTS[method])
      }
      expect(calls.map((c) => c.method)).toEqual(METHODS)
      for (const call of calls) expect(call.params, call.method).toEqual(SAMPLE_PARAMS[call.method])
    })
  )

  it.scopedLive(
    "a connection's fiber carries none of the services of the fiber that started the server",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const socketPath = path.join(base, "bridge.sock")
        // Handlers need no service from their context (their type says so): a request runs with
        // an empty one, so every scope and span inside copies nothing (issue 12: a tenth of the
        // bridge's garbage per task was copies of the daemon's 30-odd services).
        const seen: Array<number> = []
        const { handle } = recordingHandler((method) =>
          Effect.map(Effect.context<never>(), (context) => {
            seen.push(context.unsafeMap.size)
            return SAMPLE_RESULTS[method]
          })
        )
        const Daemon = Context.GenericTag<{ readonly name: string }>("test/Daemon")
        yield* serveRpc({ socketPath, allowedPeer: own, handle }).pipe(
          Effect.provideService(Daemon, { name: "daemon" })
        )
        const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
        yield* client.call("runtime.list", {})
        expect(seen).toEqual([0])
      })
  )

  it.scopedLive("optional params may be omitted; an Answer's default option list is filled in", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const { calls, handle } = recordingHandler()
      yield* serveRpc({ socketPath, allowedPeer: own, handle })
      const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
      yield* client.call("task.events", { task_id: "agt_1" })
      const line = `${JSON.stringify({
        protocol_version: 1,
        request_id: "r-answer",
        method: "task.question.answer",
        params: { task_id: "agt_1", request_id: "req_2", answers: [{ question_id: "q1", text: "t" }] }
      })}\n`
      const out = yield* rawExchange(socketPath, line, 1)
      expect(out.lines[0]).toMatchObject({ request_id: "r-answer", ok: true })
      expect(calls.map((c) => c.params)).toEqual([
        { task_id: "agt_1" },
        {
          task_id: "agt_1",
          request_id: "req_2",
          answers: [{ question_id: "q1", text: "t", selected_option_ids: [] }]
        }
      ])
    })
  )

  it.scopedLive("several requests on one connection are answered in order, one line each", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      // The first request is the slowest: answers must still come back in request order.
      const { calls, handle } = recordingHandler((method) =>
        method === "task.get"
          ? Effect.as(Effect.sleep("30 millis"), SAMPLE_RESULTS["task.get"])
          : Effect.succeed(SAMPLE_RESULTS[method])
      )
      yield* serveRpc({ socketPath, allowedPeer: own, handle })
      const payload = [
        requestLine({ request_id: "a", method: "task.get" }),
        requestLine({ request_id: "b", method: "task.cancel" }),
        requestLine({ request_id: "c", method: "no.such.method" }),
        requestLine({ request_id: "d", method: "runtime.list", params: {} })
      ].join("")
      const out = yield* rawExchange(socketPath, payload, "close", { halfClose: true })
      expect(out.closed).toBe(true)
      expect(out.lines.map((l) => [l.request_id, l.ok])).toEqual([
        ["a", true],
        ["b", true],
        ["c", false],
        ["d", true]
      ])
      expect(out.lines[1]).toEqual({ request_id: "b", ok: true, result: SAMPLE_RESULTS["task.cancel"] })
      expect(out.lines[2]).toEqual({
        request_id: "c",
        ok: false,
        error: { code: "METHOD_NOT_FOUND", message: "unknown bridge method: no.such.method" }
      })
      expect(calls.map((c) => c.method)).toEqual(["task.get", "task.cancel", "runtime.list"])
    })
  )

  it.scopedLive("requests split across many small writes are reassembled", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const { calls, handle } = recordingHandler()
      yield* serveRpc({ socketPath, allowedPeer: own, handle })
      const text = requestLine({ request_id: "split", params: { task_id: "ägt_ü" } })
      const bytes = Buffer.from(text, "utf8")
      const socket = net.createConnection({ path: socketPath }).on("error", () => {})
      const answerLine = yield* Effect.async<string>((resume) => {
        let received = ""
        socket.on("data", (chunk: Buffer) => {
          received += chunk.toString("utf8")
          if (received.endsWith("\n")) resume(Effect.succeed(received))
        })
        socket.on("connect", () => {
          // One byte at a time, splitting the multi-byte characters too.
          for (const byte of bytes) socket.write(Buffer.from([byte]))
        })
      }).pipe(Effect.ensuring(Effect.sync(() => socket.destroy())))
      expect(JSON.parse(answerLine)).toMatchObject({ request_id: "split", ok: true })
      expect(calls).toEqual([{ method: "task.get", params: { task_id: "ägt_ü" } }])
    })
  )
})

describe("handler outcomes become well-formed frames", () => {
  const serveWith = (override: Parameters<typeof recordingHandler>[0]) =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const recorded = recordingHandler(override)
      yield* serveRpc({ socketPath, allowedPeer: own, handle: recorded.handle })
      return { socketPath, ...recorded }
    })

  it.scopedLive(
    "a typed failure → {code: _tag, message} with the request_id; the connection stays usable",
    () =>
      Effect.gen(function* () {
        const { socketPath } = yield* serveWith((method) =>
          method === "task.get"
            ? Effect.fail(new AgentTaskNotFound({ message: "task agt_9 was not found" }))
            : Effect.succeed(SAMPLE_RESULTS[method as BridgeMethod])
        )
        const out = yield* rawExchange(
          socketPath,
          requestLine({ request_id: "x1" }) + requestLine({ request_id: "x2", method: "task.cancel" }),
          2
        )
        expect(out.lines).toEqual([
          {
            request_id: "x1",
            ok: false,
            error: { code: "AGENT_TASK_NOT_FOUND", message: "task agt_9 was not found" }
          },
          { request_id: "x2", ok: true, result: SAMPLE_RESULTS["task.cancel"] }
        ])
      })
  )

  it.scopedLive(
    "a frozen error outside the method's contract is a defect, never relabelled: BRIDGE_PROTOCOL_ERROR",
    () =>
      Effect.gen(function* () {
        const { socketPath } = yield* serveWith((method) =>
          method === "task.get"
            ? Effect.fail(new AgentDisabled({ message: "SECRET-OUTSIDE-CONTRACT" }))
            : Effect.fail(new AgentTaskNotFound({ message: "no such task" }))
        )
        const out = yield* rawExchange(
          socketPath,
          requestLine({ request_id: "o1" }) + requestLine({ request_id: "o2", method: "task.cancel" }),
          2
        )
        expect(out.lines).toEqual([
          {
            request_id: "o1",
            ok: false,
            error: { code: "BRIDGE_PROTOCOL_ERROR", message: "the bridge failed to process the request" }
          },
          { request_id: "o2", ok: false, error: { code: "AGENT_TASK_NOT_FOUND", message: "no such task" } }
        ])
      })
  )

  it.scopedLive("a defect → BRIDGE_PROTOCOL_ERROR with a fixed message, never the defect's text", () =>
    Effect.gen(function* () {
      const { socketPath } = yield* serveWith((method) =>
        method === "task.get"
          ? Effect.die(new Error("SECRET-DEFECT at /home/operator/.config"))
          : method === "task.cancel"
            ? Effect.sync((): unknown => {
                throw new Error("SECRET-THROWN")
              })
            : Effect.fail({ _tag: "not a code", message: "SECRET-BAD-FAILURE" })
      )
      const out = yield* rawExchange(
        socketPath,
        requestLine({ request_id: "d1" }) +
          requestLine({ request_id: "d2", method: "task.cancel" }) +
          requestLine({ request_id: "d3", method: "runtime.list", params: {} }),
        3
      )
      expect(out.lines.map((l) => [l.request_id, (l.error as { code: string }).code])).toEqual([
        ["d1", "BRIDGE_PROTOCOL_ERROR"],
        ["d2", "BRIDGE_PROTOCOL_ERROR"],
        ["d3", "BRIDGE_PROTOCOL_ERROR"]
      ])
      expect(JSON.stringify(out.lines)).not.toContain("SECRET")
    })
  )

  it.scopedLive(
    "a handler that throws outside any Effect → BRIDGE_PROTOCOL_ERROR, server keeps serving",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const socketPath = path.join(base, "bridge.sock")
        let first = true
        yield* serveRpc({
          socketPath,
          allowedPeer: own,
          handle: (method) => {
            if (first) {
              first = false
              throw new Error("SECRET-SYNC-THROW")
            }
            return Effect.succeed(SAMPLE_RESULTS[method])
          }
        })
        const out = yield* rawExchange(
          socketPath,
          requestLine({ request_id: "t1" }) + requestLine({ request_id: "t2" }),
          2
        )
        expect(out.lines[0]).toMatchObject({
          request_id: "t1",
          ok: false,
          error: { code: "BRIDGE_PROTOCOL_ERROR" }
        })
        expect(out.lines[1]).toMatchObject({ request_id: "t2", ok: true })
        expect(JSON.stringify(out.lines)).not.toContain("SECRET")
      })
  )

  it.scopedLive(
    "a result failing the method's result schema → BRIDGE_PROTOCOL_ERROR; undeclared keys are dropped",
    () =>
      Effect.gen(function* () {
        const { socketPath } = yield* serveWith((method) =>
          method === "task.cancel"
            ? Effect.succeed({ task_id: "agt_1", status: "exploded", correlation_id: null })
            : method === "task.message.send"
              ? Effect.succeed({ ...SAMPLE_RESULTS["task.message.send"], native_session_id: "SECRET-native" })
              : Effect.succeed({ no: "object", value: 1n })
        )
        const out = yield* rawExchange(
          socketPath,
          requestLine({ request_id: "s1", method: "task.cancel" }) +
            requestLine({
              request_id: "s2",
              method: "task.message.send",
              params: { task_id: "a", message: "m" }
            }) +
            requestLine({ request_id: "s3", method: "runtime.list", params: {} }),
          3
        )
        expect(out.lines[0]).toMatchObject({
          request_id: "s1",
          ok: false,
          error: { code: "BRIDGE_PROTOCOL_ERROR" }
        })
        expect(out.lines[1]).toEqual({
          request_id: "s2",
          ok: true,
          result: SAMPLE_RESULTS["task.message.send"]
        })
        expect(out.lines[2]).toMatchObject({
          request_id: "s3",
          ok: false,
          error: { code: "BRIDGE_PROTOCOL_ERROR" }
        })
      })
  )

  it.scopedLive(
    "a response over 1 MiB → RESPONSE_TOO_LARGE with the request_id; the connection stays usable",
    () =>
      Effect.gen(function* () {
        const { socketPath } = yield* serveWith((method) =>
          method === "task.result.read"
            ? Effect.succeed({ ...SAMPLE_RESULTS["task.result.read"], text: "x".repeat(1_048_576) })
            : Effect.succeed(SAMPLE_RESULTS[method as BridgeMethod])
        )
        const out = yield* rawExchange(
          socketPath,
          requestLine({ request_id: "big", method: "task.result.read", params: { task_id: "agt_1" } }) +
            requestLine({ request_id: "after" }),
          2
        )
        expect(out.lines[0]).toEqual({
          request_id: "big",
          ok: false,
          error: { code: "RESPONSE_TOO_LARGE", message: "the response exceeds 1048576 bytes" }
        })
        expect(out.lines[1]).toMatchObject({ request_id: "after", ok: true })
      })
  )
})

describe("connections that go away", () => {
  it.scopedLive("a client that disconnects mid-request does not disturb the server", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      let finished = 0
      const { calls, handle } = recordingHandler((method) =>
        method === "task.get"
          ? Effect.gen(function* () {
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(release)
              finished++
              return SAMPLE_RESULTS["task.get"]
            })
          : Effect.succeed(SAMPLE_RESULTS[method])
      )
      yield* serveRpc({ socketPath, allowedPeer: own, handle })
      const socket = net.createConnection({ path: socketPath }).on("error", () => {})
      socket.on("connect", () => socket.write(requestLine({ request_id: "gone" })))
      yield* Deferred.await(started)
      yield* Effect.async<void>((resume) => {
        socket.once("close", () => resume(Effect.void))
        socket.destroy()
      })
      yield* Deferred.succeed(release, undefined)
      // The handler ran to completion (a disconnect never cancels work)…
      const client = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
      expect(yield* client.call("task.cancel", { task_id: "agt_1" })).toEqual(SAMPLE_RESULTS["task.cancel"])
      expect(finished).toBe(1)
      // …and the server still answers new connections.
      expect(calls.map((c) => c.method)).toEqual(["task.get", "task.cancel"])
    })
  )

  it.live("closing the server's scope interrupts requests in flight and the client sees UNAVAILABLE", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const baseScope = yield* Scope.make()
      const base = yield* Scope.extend(tempBase, baseScope)
      const socketPath = path.join(base, "bridge.sock")
      const started = yield* Deferred.make<void>()
      let interrupted = false
      yield* Scope.extend(
        serveRpc({
          socketPath,
          allowedPeer: own,
          handle: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  interrupted = true
                })
              )
            )
        }),
        scope
      )
      const client = makeBridgeClient({ socketPath, timeoutSeconds: 30 })
      const call = yield* Effect.fork(Effect.either(client.call("task.get", { task_id: "agt_1" })))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      const result = yield* Fiber.join(call)
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") expect(result.left._tag).toBe("AGENT_BRIDGE_UNAVAILABLE")
      expect(interrupted).toBe(true)
      yield* Scope.close(baseScope, Exit.void)
    })
  )
})
