/**
 * The MCP side of the RPC against a raw `net` server that answers exactly what each test wants:
 * transport failures → AGENT_BRIDGE_UNAVAILABLE, malformed answers → AGENT_BRIDGE_PROTOCOL_ERROR,
 * well-formed errors pass through with their code and message, and no descriptor leaks.
 */
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  AgentDisabled,
  AgentTaskNotFound,
  type BridgeMethod,
  MAX_FRAME_BYTES,
  PeerNotAuthorized,
  RelayedBridgeError,
  WorkdirBusy,
  WorkdirNotFound
} from "@serverfs/domain"
import { Deferred, Effect, Either, Exit, Fiber, Layer } from "effect"
import { BridgeClient, MCP_REQUEST_ID_PATTERN, makeBridgeClient, serveRpc } from "../src/index.js"
import { openFds, recordingHandler, SAMPLE_PARAMS, SAMPLE_RESULTS, tempBase } from "./fixtures.js"

interface RawServer {
  readonly socketPath: string
  /** Request lines received, in order. */
  readonly requests: Array<string>
  /** Connections accepted. */
  readonly connections: () => number
  /** Resolves when every accepted connection has been closed by the client. */
  readonly allClosed: Effect.Effect<void>
}

/**
 * A server that reads one request line per connection and lets `answer` write whatever it
 * likes (or nothing). `answer` gets the request_id so a test can echo or corrupt it.
 */
const rawServer = (answer: (socket: net.Socket, requestId: string) => void) =>
  Effect.gen(function* () {
    const base = yield* tempBase
    const socketPath = path.join(base, "raw.sock")
    const requests: Array<string> = []
    let accepted = 0
    const open = new Set<net.Socket>()
    const waiters: Array<() => void> = []
    yield* Effect.acquireRelease(
      Effect.async<net.Server>((resume) => {
        const s = net.createServer((socket) => {
          accepted++
          open.add(socket)
          socket.on("error", () => {})
          socket.on("close", () => {
            open.delete(socket)
            if (open.size === 0) for (const w of waiters.splice(0)) w()
          })
          let buffered = ""
          socket.on("data", (chunk: Buffer) => {
            if (buffered.includes("\n")) return
            buffered += chunk.toString("utf8")
            const newline = buffered.indexOf("\n")
            if (newline === -1) return
            const line = buffered.slice(0, newline)
            requests.push(line)
            answer(socket, (JSON.parse(line) as { request_id: string }).request_id)
          })
        })
        s.listen(socketPath, () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.async<void>((resume) => {
          for (const socket of open) socket.destroy()
          s.close(() => resume(Effect.void))
        })
    )
    const allClosed = Effect.async<void>((resume) => {
      if (open.size === 0) resume(Effect.void)
      else waiters.push(() => resume(Effect.void))
    })
    return { socketPath, requests, connections: () => accepted, allClosed } satisfies RawServer
  })

const line = (value: unknown) => `${JSON.stringify(value)}\n`

const cancelResult = SAMPLE_RESULTS["task.cancel"]

const callCancel = (socketPath: string, timeoutSeconds = 10) =>
  Effect.either(makeBridgeClient({ socketPath, timeoutSeconds }).call("task.cancel", { task_id: "agt_1" }))

const expectFailure = (
  result: Either.Either<unknown, { _tag: string; message: string }>,
  tag: string,
  message?: string
) => {
  expect(Either.isLeft(result)).toBe(true)
  if (Either.isLeft(result)) {
    expect(result.left._tag).toBe(tag)
    if (message !== undefined) expect(result.left.message).toBe(message)
  }
}

describe("requests the client sends", () => {
  it.scopedLive("one line per connection: protocol_version 1, an mcp_<24 hex> id, the encoded params", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket, id) => {
        socket.write(line({ request_id: id, ok: true, result: SAMPLE_RESULTS["task.question.answer"] }))
      })
      const client = makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 10 })
      yield* client.call("task.question.answer", {
        task_id: "agt_1",
        request_id: "req_2",
        answers: [{ question_id: "q1", selected_option_ids: [] }]
      })
      yield* client.call("task.question.answer", SAMPLE_PARAMS["task.question.answer"])
      yield* server.allClosed
      expect(server.connections()).toBe(2)
      const [first, second] = server.requests.map((r) => JSON.parse(r) as Record<string, unknown>)
      expect(Object.keys(first ?? {})).toEqual(["protocol_version", "request_id", "method", "params"])
      expect(first).toMatchObject({
        protocol_version: 1,
        method: "task.question.answer",
        params: {
          task_id: "agt_1",
          request_id: "req_2",
          answers: [{ question_id: "q1", selected_option_ids: [] }]
        }
      })
      expect(first?.request_id).toMatch(MCP_REQUEST_ID_PATTERN)
      expect(second?.request_id).toMatch(MCP_REQUEST_ID_PATTERN)
      expect(second?.request_id).not.toBe(first?.request_id)
    })
  )

  it.scopedLive(
    "a request over 1 MiB is refused locally with AGENT_BRIDGE_PROTOCOL_ERROR; nothing connects",
    () =>
      Effect.gen(function* () {
        const server = yield* rawServer(() => {})
        const client = makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 10 })
        const result = yield* Effect.either(
          client.call("task.message.send", { task_id: "agt_1", message: "m".repeat(MAX_FRAME_BYTES) })
        )
        expectFailure(result, "AGENT_BRIDGE_PROTOCOL_ERROR", "Agent Bridge protocol failure")
        expect(server.connections()).toBe(0)
      })
  )

  it.scopedLive(
    "params that fail the method's schema (a caller bug) are refused locally; nothing connects",
    () =>
      Effect.gen(function* () {
        const server = yield* rawServer(() => {})
        const client = makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 10 })
        const wrongType = yield* Effect.either(
          client.call("task.events", { task_id: "agt_1", limit: true } as unknown as { task_id: string })
        )
        const extraKey = yield* Effect.either(
          client.call("task.get", { task_id: "agt_1", debug: 1 } as unknown as { task_id: string })
        )
        expectFailure(wrongType, "AGENT_BRIDGE_PROTOCOL_ERROR")
        expectFailure(extraKey, "AGENT_BRIDGE_PROTOCOL_ERROR")
        expect(server.connections()).toBe(0)
      })
  )
})

describe("transport failures → AGENT_BRIDGE_UNAVAILABLE", () => {
  it.scopedLive("a missing socket", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      expectFailure(
        yield* callCancel(path.join(base, "missing.sock")),
        "AGENT_BRIDGE_UNAVAILABLE",
        "Agent Bridge is unavailable"
      )
    })
  )

  it.scopedLive("connection refused (a stale socket file)", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "stale.sock")
      yield* Effect.async<void>((resume) => {
        const s = net.createServer()
        s.listen(socketPath, () => {
          fs.linkSync(socketPath, `${socketPath}.keep`)
          s.close(() => {
            fs.renameSync(`${socketPath}.keep`, socketPath)
            resume(Effect.void)
          })
        })
      })
      expectFailure(yield* callCancel(socketPath), "AGENT_BRIDGE_UNAVAILABLE", "Agent Bridge is unavailable")
    })
  )

  it.scopedLive("the server closes without answering", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket) => socket.end())
      expectFailure(yield* callCancel(server.socketPath), "AGENT_BRIDGE_UNAVAILABLE")
    })
  )

  it.scopedLive("EOF in the middle of the response line", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket, id) => socket.end(`{"request_id":"${id}","ok":tr`))
      expectFailure(yield* callCancel(server.socketPath), "AGENT_BRIDGE_UNAVAILABLE")
    })
  )

  it.scopedLive("the server resets the connection", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket) => socket.destroy())
      expectFailure(yield* callCancel(server.socketPath), "AGENT_BRIDGE_UNAVAILABLE")
    })
  )

  it.scopedLive("timeout: a server that accepts and never answers; the client's socket is closed", () =>
    Effect.gen(function* () {
      const server = yield* rawServer(() => {})
      expectFailure(
        yield* callCancel(server.socketPath, 0.2),
        "AGENT_BRIDGE_UNAVAILABLE",
        "Agent Bridge is unavailable"
      )
      expect(server.connections()).toBe(1)
      // The server's side sees the client go away (the raw server never closes on its own).
      yield* server.allClosed
    })
  )

  it.scopedLive("interrupting a call closes its socket", () =>
    Effect.gen(function* () {
      const received = yield* Deferred.make<void>()
      const server = yield* rawServer(() => Deferred.unsafeDone(received, Exit.void))
      const client = makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 60 })
      const fiber = yield* Effect.fork(client.call("task.get", { task_id: "agt_1" }))
      yield* Deferred.await(received)
      yield* Fiber.interrupt(fiber)
      yield* server.allClosed
      expect(server.connections()).toBe(1)
    })
  )
})

const BAD_RESPONSES: ReadonlyArray<{
  readonly name: string
  readonly write: (id: string) => string | Uint8Array
}> = [
  { name: "not JSON", write: () => "garbage\n" },
  { name: "a JSON array", write: () => "[]\n" },
  {
    name: "invalid UTF-8",
    write: (id) =>
      Buffer.concat([
        Buffer.from(`{"request_id":"${id}","ok":true,"result":{"task_id":"`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('","status":"cancelled","correlation_id":null}}\n')
      ])
  },
  {
    name: "a NaN literal",
    write: (id) =>
      `{"request_id":"${id}","ok":true,"result":{"task_id":"a","status":"cancelled","correlation_id":NaN}}\n`
  },
  {
    name: "a number overflowing to Infinity",
    write: (id) =>
      `{"request_id":"${id}","ok":true,"result":{"task_id":"a","status":"cancelled","correlation_id":null,"n":1e999}}\n`
  },
  {
    name: "an extra top-level key",
    write: (id) => line({ request_id: id, ok: true, result: cancelResult, extra: 1 })
  },
  { name: "a missing result", write: (id) => line({ request_id: id, ok: true }) },
  {
    name: "both result and error",
    write: (id) =>
      line({ request_id: id, ok: true, result: cancelResult, error: { code: "X", message: "y" } })
  },
  { name: "a missing request_id", write: () => line({ ok: true, result: cancelResult }) },
  {
    name: "a request_id mismatch",
    write: () => line({ request_id: `mcp_${"0".repeat(24)}`, ok: true, result: cancelResult })
  },
  {
    name: "a null request_id on success",
    write: () => line({ request_id: null, ok: true, result: cancelResult })
  },
  {
    name: 'a non-bool ok ("true")',
    write: (id) => line({ request_id: id, ok: "true", result: cancelResult })
  },
  { name: "a non-bool ok (1)", write: (id) => line({ request_id: id, ok: 1, result: cancelResult }) },
  { name: "a missing ok", write: (id) => line({ request_id: id, result: cancelResult }) },
  {
    name: "a non-object result (array)",
    write: (id) => line({ request_id: id, ok: true, result: [cancelResult] })
  },
  { name: "a non-object result (string)", write: (id) => line({ request_id: id, ok: true, result: "done" }) },
  {
    name: "a result failing the method's schema",
    write: (id) => line({ request_id: id, ok: true, result: { ...cancelResult, status: "exploded" } })
  },
  {
    name: "a result missing a field",
    write: (id) => line({ request_id: id, ok: true, result: { task_id: "agt_1", status: "cancelled" } })
  },
  {
    name: "an error with a mismatched request_id",
    write: () =>
      line({ request_id: "mcp_other", ok: false, error: { code: "AGENT_TASK_NOT_FOUND", message: "m" } })
  },
  {
    name: "an error that is not an object",
    write: (id) => line({ request_id: id, ok: false, error: "AGENT_TASK_NOT_FOUND" })
  },
  {
    name: "an error with an extra key",
    write: (id) =>
      line({ request_id: id, ok: false, error: { code: "AGENT_TASK_NOT_FOUND", message: "m", detail: 1 } })
  },
  {
    name: "an error without a message",
    write: (id) => line({ request_id: id, ok: false, error: { code: "AGENT_TASK_NOT_FOUND" } })
  },
  {
    name: "an error code that is not a string",
    write: (id) => line({ request_id: id, ok: false, error: { code: 404, message: "m" } })
  },
  {
    name: "an error code that is not an UPPER_SNAKE word",
    write: (id) => line({ request_id: id, ok: false, error: { code: "not found: \n", message: "m" } })
  },
  {
    name: "an error code that is empty",
    write: (id) => line({ request_id: id, ok: false, error: { code: "", message: "m" } })
  },
  {
    name: "a response line over 1 MiB (no newline, connection left open)",
    write: () => "x".repeat(MAX_FRAME_BYTES + 1)
  },
  {
    name: "a response line over 1 MiB (valid JSON with a newline)",
    write: (id) =>
      line({ request_id: id, ok: true, result: { ...cancelResult, pad: "p".repeat(MAX_FRAME_BYTES) } })
  }
]

describe("malformed responses → AGENT_BRIDGE_PROTOCOL_ERROR", () => {
  for (const bad of BAD_RESPONSES) {
    it.scopedLive(bad.name, () =>
      Effect.gen(function* () {
        // The raw server never closes on its own: only the client's own checks can end the call
        // (a 60 s timeout would surface as AGENT_BRIDGE_UNAVAILABLE, failing the test).
        const server = yield* rawServer((socket, id) => {
          socket.write(bad.write(id))
        })
        expectFailure(
          yield* callCancel(server.socketPath, 60),
          "AGENT_BRIDGE_PROTOCOL_ERROR",
          "Agent Bridge protocol failure"
        )
        yield* server.allClosed
      })
    )
  }
})

describe("well-formed responses", () => {
  it.scopedLive(
    "an error passes through as the AgentError of its code with the bridge's message verbatim",
    () =>
      Effect.gen(function* () {
        const message = 'task agt_9 was not found — ünïcödé "quoted"'
        const server = yield* rawServer((socket, id) => {
          socket.write(line({ request_id: id, ok: false, error: { code: "AGENT_TASK_NOT_FOUND", message } }))
        })
        const result = yield* callCancel(server.socketPath)
        expectFailure(result, "AGENT_TASK_NOT_FOUND", message)
        if (Either.isLeft(result)) expect(result.left).toBeInstanceOf(AgentTaskNotFound)
      })
  )

  it.scopedLive("an error with request_id null (refused before the id was read) passes through", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket) => {
        socket.end(
          line({ request_id: null, ok: false, error: { code: "PEER_NOT_AUTHORIZED", message: "not you" } })
        )
      })
      const result = yield* callCancel(server.socketPath)
      expectFailure(result, "PEER_NOT_AUTHORIZED", "not you")
      if (Either.isLeft(result)) expect(result.left).toBeInstanceOf(PeerNotAuthorized)
    })
  )

  it.scopedLive(
    "a code without a class here (shared WORKDIR_BUSY, a newer bridge's) is relayed verbatim",
    () =>
      Effect.gen(function* () {
        const server = yield* rawServer((socket, id) => {
          socket.write(
            line({
              request_id: id,
              ok: false,
              error: { code: "WORKDIR_BUSY", message: "'wd' has an active Agent writer" }
            })
          )
        })
        const result = yield* callCancel(server.socketPath)
        expectFailure(result, "WORKDIR_BUSY", "'wd' has an active Agent writer")
        if (Either.isLeft(result)) expect(result.left).toBeInstanceOf(RelayedBridgeError)
      })
  )

  it.scopedLive(
    "a code of the method's contract comes back as its own class, filesystem codes included",
    () =>
      Effect.gen(function* () {
        const answers = [
          { code: "WORKDIR_BUSY", message: "wd has an active Agent writer" },
          { code: "WORKDIR_NOT_FOUND", message: "'nope' is not a configured workdir" },
          { code: "AGENT_DISABLED", message: "Agent delegation is disabled for wd" }
        ]
        let next = 0
        const server = yield* rawServer((socket, id) => {
          socket.write(line({ request_id: id, ok: false, error: answers[next++] }))
        })
        const client = makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 10 })
        const submit = Effect.flip(client.call("task.submit", SAMPLE_PARAMS["task.submit"]))
        const busy = yield* submit
        expect(busy).toBeInstanceOf(WorkdirBusy)
        expect(busy).toMatchObject({ _tag: "WORKDIR_BUSY", workdir: "wd", message: answers[0]?.message })
        const missing = yield* submit
        expect(missing).toBeInstanceOf(WorkdirNotFound)
        expect(missing).toMatchObject({ workdir: "nope", message: answers[1]?.message })
        const disabled = yield* submit
        expect(disabled).toBeInstanceOf(AgentDisabled)
        expect(disabled.message).toBe(answers[2]?.message)
      })
  )

  it.scopedLive("a code outside the method's contract is relayed verbatim, never given a class", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket, id) => {
        socket.write(line({ request_id: id, ok: false, error: { code: "AGENT_DISABLED", message: "m" } }))
      })
      const result = yield* Effect.either(
        makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 10 }).call("task.get", {
          task_id: "agt_1"
        })
      )
      expectFailure(result, "AGENT_DISABLED", "m")
      if (Either.isLeft(result)) expect(result.left).toBeInstanceOf(RelayedBridgeError)
    })
  )

  it.scopedLive("result fields the schema does not know pass through unchanged", () =>
    Effect.gen(function* () {
      const extra = {
        ...SAMPLE_RESULTS["task.submit"],
        preflight: { status: "completed" },
        routing_advice: null
      }
      const server = yield* rawServer((socket, id) => {
        socket.write(line({ request_id: id, ok: true, result: extra }))
      })
      const client = makeBridgeClient({ socketPath: server.socketPath, timeoutSeconds: 10 })
      expect(yield* client.call("task.submit", SAMPLE_PARAMS["task.submit"])).toEqual(extra)
    })
  )

  it.scopedLive("bytes after the response line are ignored", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket, id) => {
        socket.write(`${line({ request_id: id, ok: true, result: cancelResult })}trailing garbage`)
      })
      const result = yield* callCancel(server.socketPath)
      expect(result).toEqual(Either.right(cancelResult))
    })
  )

  it.scopedLive("BridgeClient.layer provides the port", () =>
    Effect.gen(function* () {
      const server = yield* rawServer((socket, id) => {
        socket.write(line({ request_id: id, ok: true, result: SAMPLE_RESULTS["runtime.list"] }))
      })
      const result = yield* Effect.flatMap(BridgeClient, (client) => client.call("runtime.list", {})).pipe(
        Effect.provide(BridgeClient.layer({ socketPath: server.socketPath, timeoutSeconds: 10 }))
      )
      expect(result).toEqual(SAMPLE_RESULTS["runtime.list"])
      expect(Layer.isLayer(BridgeClient.layer({ socketPath: "/x", timeoutSeconds: 1 }))).toBe(true)
    })
  )
})

describe("descriptor hygiene", () => {
  it.scopedLive("2,000 calls of every outcome leave /proc/self/fd as it was", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const { handle } = recordingHandler((method) =>
        method === "task.get"
          ? Effect.fail(new AgentTaskNotFound({ message: "no such task" }))
          : Effect.succeed(SAMPLE_RESULTS[method as BridgeMethod])
      )
      yield* serveRpc({ socketPath, allowedPeer: { uid: null, gid: null }, handle })
      const silent = yield* rawServer(() => {})
      const good = makeBridgeClient({ socketPath, timeoutSeconds: 10 })
      const missing = makeBridgeClient({ socketPath: path.join(base, "missing.sock"), timeoutSeconds: 10 })
      const hanging = makeBridgeClient({ socketPath: silent.socketPath, timeoutSeconds: 0.01 })

      const settle = <A, E extends { _tag: string }>(effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.either(effect), (r) => (Either.isLeft(r) ? r.left._tag : "ok"))
      // Warm up once so lazily opened descriptors (e.g. the crypto RNG) are in the baseline.
      yield* settle(good.call("task.cancel", { task_id: "agt_1" }))
      yield* settle(hanging.call("task.cancel", { task_id: "agt_1" }))
      yield* silent.allClosed
      const baseline = openFds()

      const outcomes = new Map<string, number>()
      for (let i = 0; i < 2000; i++) {
        const outcome =
          i % 100 === 0
            ? yield* settle(hanging.call("task.cancel", { task_id: "agt_1" }))
            : i % 10 === 0
              ? yield* settle(missing.call("task.cancel", { task_id: "agt_1" }))
              : i % 3 === 0
                ? yield* settle(good.call("task.get", { task_id: "agt_1" }))
                : yield* settle(good.call("task.cancel", { task_id: "agt_1" }))
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
      }
      expect(Object.fromEntries(outcomes)).toEqual({
        ok: expect.any(Number),
        AGENT_TASK_NOT_FOUND: expect.any(Number),
        AGENT_BRIDGE_UNAVAILABLE: 200
      })
      // The server side closes its end of each connection once it sees the client's EOF.
      yield* silent.allClosed
      let now = openFds()
      for (let spins = 0; now > baseline && spins < 500; spins++) {
        yield* Effect.sleep("10 millis")
        now = openFds()
      }
      expect(now).toBe(baseline)
    })
  )
})
