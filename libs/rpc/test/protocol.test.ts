/**
 * Envelope rejections (bridge-internals §1.4): each one is answered with its code and proven to
 * dispatch nothing — the handler records every call it gets.
 */
import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { MAX_FRAME_BYTES } from "@serverfs/domain"
import { Effect } from "effect"
import { serveRpc } from "../src/index.js"
import { rawExchange, recordingHandler, requestLine, SAMPLE_RESULTS, tempBase } from "./fixtures.js"

const own = { uid: null, gid: null } as const

const serve = Effect.gen(function* () {
  const base = yield* tempBase
  const socketPath = path.join(base, "bridge.sock")
  const recorded = recordingHandler()
  yield* serveRpc({ socketPath, allowedPeer: own, handle: recorded.handle })
  return { socketPath, ...recorded }
})

interface Rejection {
  readonly name: string
  readonly line: string | Uint8Array
  readonly code: string
  readonly requestId: string | null
  readonly message?: string | RegExp
}

const raw = (text: string): string => `${text}\n`

const REJECTIONS: ReadonlyArray<Rejection> = [
  {
    name: "unknown method",
    line: requestLine({ method: "task.delete" }),
    code: "METHOD_NOT_FOUND",
    requestId: "r1",
    message: "unknown bridge method: task.delete"
  },
  {
    name: "unknown method with control characters (escaped in the message)",
    line: requestLine({ method: "evil\n\u001b[31mname" }),
    code: "METHOD_NOT_FOUND",
    requestId: "r1",
    message: 'unknown bridge method: "evil\\n\\u001b[31mname"'
  },
  {
    name: "a very long unknown method (bounded in the message)",
    line: requestLine({ method: "m".repeat(100_000) }),
    code: "METHOD_NOT_FOUND",
    requestId: "r1",
    message: /^unknown bridge method: "m{128}"…$/
  },
  {
    name: "unknown param field",
    line: requestLine({ params: { task_id: "agt_1", verbose: true } }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "invalid params for task.get: unknown field verbose"
  },
  {
    name: "missing param field",
    line: requestLine({ params: {} }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "invalid params for task.get: missing field task_id"
  },
  {
    name: "wrong param type",
    line: requestLine({ params: { task_id: 7 } }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: /^invalid params for task\.get: field task_id: /
  },
  {
    name: "a boolean where an int is expected (task.events limit:true)",
    line: requestLine({ method: "task.events", params: { task_id: "agt_1", limit: true } }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: /^invalid params for task\.events: field limit: /
  },
  {
    name: "a fraction where an int is expected",
    line: requestLine({ method: "task.events", params: { task_id: "agt_1", after_event_id: 1.5 } }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: /field after_event_id/
  },
  {
    name: "a nested wrong type (answers[0].question_id)",
    line: requestLine({
      method: "task.question.answer",
      params: { task_id: "t", request_id: "q", answers: [{ question_id: 1 }] }
    }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: /field answers\.\[0\]\.question_id/
  },
  { name: "invalid JSON", line: raw('{"protocol_version":1,'), code: "INVALID_REQUEST", requestId: null },
  { name: "an empty line", line: raw(""), code: "INVALID_REQUEST", requestId: null },
  {
    name: "NaN literal",
    line: raw('{"protocol_version":1,"request_id":"r1","method":"task.get","params":{"task_id":NaN}}'),
    code: "INVALID_REQUEST",
    requestId: null
  },
  {
    name: "Infinity literal",
    line: raw('{"protocol_version":Infinity,"request_id":"r1","method":"task.get","params":{"task_id":"a"}}'),
    code: "INVALID_REQUEST",
    requestId: null
  },
  {
    name: "a number literal overflowing to Infinity",
    line: raw(
      '{"protocol_version":1,"request_id":"r1","method":"task.events","params":{"task_id":"a","limit":1e999}}'
    ),
    code: "INVALID_REQUEST",
    requestId: null,
    message: /non-finite/
  },
  {
    name: "invalid UTF-8",
    line: Buffer.concat([
      Buffer.from('{"protocol_version":1,"request_id":"r1","method":"task.get","params":{"task_id":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}\n')
    ]),
    code: "INVALID_REQUEST",
    requestId: null,
    message: /UTF-8/
  },
  { name: "a JSON array", line: raw("[1,2]"), code: "INVALID_REQUEST", requestId: null },
  { name: "a JSON string", line: raw('"hello"'), code: "INVALID_REQUEST", requestId: null },
  {
    name: "extra top-level key",
    line: requestLine({ trace: "x" }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "request has unknown key trace"
  },
  {
    name: "missing key (params)",
    line: raw('{"protocol_version":1,"request_id":"r1","method":"task.get"}'),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "request is missing key params"
  },
  {
    name: "missing key (request_id)",
    line: raw('{"protocol_version":1,"method":"task.get","params":{"task_id":"a"}}'),
    code: "INVALID_REQUEST",
    requestId: null
  },
  {
    name: "protocol_version 2",
    line: requestLine({ protocol_version: 2 }),
    code: "PROTOCOL_VERSION_UNSUPPORTED",
    requestId: "r1"
  },
  {
    name: 'protocol_version "1"',
    line: requestLine({ protocol_version: "1" }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "protocol_version must be an integer"
  },
  {
    name: "protocol_version true",
    line: requestLine({ protocol_version: true }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "protocol_version must be an integer"
  },
  {
    name: "protocol_version 1.5",
    line: requestLine({ protocol_version: 1.5 }),
    code: "INVALID_REQUEST",
    requestId: "r1"
  },
  {
    name: "empty request_id",
    line: requestLine({ request_id: "" }),
    code: "INVALID_REQUEST",
    requestId: null
  },
  {
    name: "numeric request_id",
    line: requestLine({ request_id: 5 }),
    code: "INVALID_REQUEST",
    requestId: null
  },
  { name: "empty method", line: requestLine({ method: "" }), code: "INVALID_REQUEST", requestId: "r1" },
  { name: "null method", line: requestLine({ method: null }), code: "INVALID_REQUEST", requestId: "r1" },
  {
    name: "params an array",
    line: requestLine({ params: ["agt_1"] }),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: "params must be a JSON object"
  },
  { name: "params null", line: requestLine({ params: null }), code: "INVALID_REQUEST", requestId: "r1" },
  {
    name: "a prototype-named key in params",
    line: raw(
      '{"protocol_version":1,"request_id":"r1","method":"task.get","params":{"task_id":"a","__proto__":{}}}'
    ),
    code: "INVALID_REQUEST",
    requestId: "r1",
    message: /unknown field __proto__/
  }
]

describe("envelope rejections dispatch nothing", () => {
  for (const rejection of REJECTIONS) {
    it.scopedLive(`${rejection.name} → ${rejection.code}`, () =>
      Effect.gen(function* () {
        const { socketPath, calls } = yield* serve
        // A valid request follows on the same connection: a rejection is not fatal.
        const out = yield* rawExchange(
          socketPath,
          Buffer.concat([Buffer.from(rejection.line), Buffer.from(requestLine({ request_id: "next" }))]),
          2
        )
        const [first, second] = out.lines
        expect(first).toMatchObject({
          request_id: rejection.requestId,
          ok: false,
          error: { code: rejection.code }
        })
        expect(Object.keys(first ?? {}).sort()).toEqual(["error", "ok", "request_id"])
        const message = String((first?.error as { message?: unknown } | undefined)?.message)
        if (typeof rejection.message === "string") expect(message).toBe(rejection.message)
        else if (rejection.message !== undefined) expect(message).toMatch(rejection.message)
        expect([...message].some((c) => c.charCodeAt(0) < 0x20)).toBe(false)
        expect(second).toEqual({ request_id: "next", ok: true, result: SAMPLE_RESULTS["task.get"] })
        // Only the valid follow-up reached the handler.
        expect(calls).toEqual([{ method: "task.get", params: { task_id: "agt_1" } }])
      })
    )
  }
})

/** A valid task.message.send line of exactly `bytes` bytes, not counting its newline. */
const lineOfSize = (bytes: number): string => {
  const shell = JSON.stringify({
    protocol_version: 1,
    request_id: "sized",
    method: "task.message.send",
    params: { task_id: "agt_1", message: "" }
  })
  const text = shell.replace('"message":""', `"message":"${"m".repeat(bytes - Buffer.byteLength(shell))}"`)
  expect(Buffer.byteLength(text)).toBe(bytes)
  return text
}

describe("frame size limit (1 MiB, counted in bytes before parsing)", () => {
  it.scopedLive("a line of exactly 1 MiB is accepted and dispatched", () =>
    Effect.gen(function* () {
      const { socketPath, calls } = yield* serve
      const out = yield* rawExchange(socketPath, `${lineOfSize(MAX_FRAME_BYTES)}\n`, 1)
      expect(out.lines[0]).toEqual({
        request_id: "sized",
        ok: true,
        result: SAMPLE_RESULTS["task.message.send"]
      })
      expect(calls).toHaveLength(1)
    })
  )

  it.scopedLive("a multi-byte line of exactly 1 MiB (counted in bytes, not characters) is accepted", () =>
    Effect.gen(function* () {
      const { socketPath, calls } = yield* serve
      const shell = JSON.stringify({
        protocol_version: 1,
        request_id: "utf8",
        method: "task.message.send",
        params: { task_id: "agt_1", message: "" }
      })
      // "é" is two bytes; pad with one ASCII byte if the remaining budget is odd.
      const budget = MAX_FRAME_BYTES - Buffer.byteLength(shell)
      const message = "é".repeat(Math.floor(budget / 2)) + "a".repeat(budget % 2)
      const text = shell.replace('"message":""', `"message":"${message}"`)
      expect(Buffer.byteLength(text)).toBe(MAX_FRAME_BYTES)
      const out = yield* rawExchange(socketPath, `${text}\n`, 1)
      expect(out.lines[0]).toMatchObject({ request_id: "utf8", ok: true })
      expect(calls).toHaveLength(1)
      // One more byte: the line is now 1 MiB + 1 bytes but only about half as many characters.
      const over = `${text.slice(0, -3)}a"}}\n`
      expect(Buffer.byteLength(over)).toBe(MAX_FRAME_BYTES + 2)
      expect(over.length).toBeLessThan(MAX_FRAME_BYTES)
      const rejected = yield* rawExchange(socketPath, over, "close")
      expect(rejected.lines).toEqual([
        { request_id: null, ok: false, error: { code: "REQUEST_TOO_LARGE", message: expect.any(String) } }
      ])
      expect(calls).toHaveLength(1)
    })
  )

  it.scopedLive(
    "1 MiB + 1 bytes with a newline → REQUEST_TOO_LARGE (request_id null), connection closed",
    () =>
      Effect.gen(function* () {
        const { socketPath, calls } = yield* serve
        // A perfectly valid request, only too long: the size is judged before any parsing.
        const out = yield* rawExchange(
          socketPath,
          `${lineOfSize(MAX_FRAME_BYTES + 1)}\n${requestLine({ request_id: "never" })}`,
          "close"
        )
        expect(out.closed).toBe(true)
        expect(out.lines).toEqual([
          {
            request_id: null,
            ok: false,
            error: { code: "REQUEST_TOO_LARGE", message: `a request line exceeds ${MAX_FRAME_BYTES} bytes` }
          }
        ])
        expect(calls).toEqual([])
      })
  )

  it.scopedLive(
    "1 MiB + 1 bytes still growing without a newline → REQUEST_TOO_LARGE, connection closed",
    () =>
      Effect.gen(function* () {
        const { socketPath, calls } = yield* serve
        // The client keeps its side open: the server must not wait for the newline.
        const out = yield* rawExchange(socketPath, "x".repeat(MAX_FRAME_BYTES + 1), "close")
        expect(out.closed).toBe(true)
        expect(out.lines).toEqual([
          {
            request_id: null,
            ok: false,
            error: { code: "REQUEST_TOO_LARGE", message: `a request line exceeds ${MAX_FRAME_BYTES} bytes` }
          }
        ])
        expect(calls).toEqual([])
      })
  )

  it.scopedLive("requests answered before an oversized line keep their answers", () =>
    Effect.gen(function* () {
      const { socketPath, calls } = yield* serve
      const out = yield* rawExchange(
        socketPath,
        `${requestLine({ request_id: "before" })}${"y".repeat(MAX_FRAME_BYTES + 10)}\n`,
        "close"
      )
      expect(
        out.lines.map((l) => [l.request_id, (l.error as { code?: string } | undefined)?.code ?? "ok"])
      ).toEqual([
        ["before", "ok"],
        [null, "REQUEST_TOO_LARGE"]
      ])
      expect(calls).toHaveLength(1)
    })
  )
})
