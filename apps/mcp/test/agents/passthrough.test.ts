import * as fs from "node:fs"
import * as net from "node:net"
import { type AgentStack, startAgentStack } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { fails, ok } from "./support.js"

/**
 * The MCP side of the bridge contract (tool-contracts §8, bridge-internals §1.4), against a
 * scripted stand-in listening on the bridge socket: what serverfs-mcp sends, that bridge
 * results — including fields a newer or reference bridge adds (protocol v1 grows without a
 * version bump) — reach the client unchanged and valid against the advertised outputSchema, and
 * how transport failures map: AGENT_BRIDGE_UNAVAILABLE, AGENT_BRIDGE_PROTOCOL_ERROR, and any
 * bridge error code relayed as `CODE: message`.
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

type Reply =
  | { readonly kind: "result"; readonly result: Record<string, unknown> }
  | {
      readonly kind: "error"
      readonly code: string
      readonly message: string
      readonly requestId?: string | null
    }
  | { readonly kind: "raw"; readonly line: string }
  | { readonly kind: "hang" }
  | { readonly kind: "close" }

interface Received {
  readonly protocol_version: unknown
  readonly request_id: string
  readonly method: string
  readonly params: Record<string, unknown>
}

let stack: AgentStack
let server: net.Server
const received: Received[] = []
let script: (request: Received) => Reply = () => ({ kind: "close" })

const TASK_ID = "agt_0123456789abcdef01234567"

/** A task view as a reference bridge (v0.9+, Jev configured) returns it: with extra fields. */
const referenceTaskView = () => ({
  task_id: TASK_ID,
  runtime: "fake",
  workdir_alias: "main",
  workdir_slot: 1,
  relative_cwd: "",
  profile: "workspace-write",
  status: "running",
  created_at: "2026-01-01T00:00:00.000Z",
  started_at: "2026-01-01T00:00:01.000Z",
  updated_at: "2026-01-01T00:00:01.000Z",
  completed_at: null,
  deadline_at: "2026-01-01T02:00:00.000Z",
  continue_from_task_id: null,
  correlation_id: null,
  idempotency_key: null,
  requested_model: null,
  final_response: null,
  final_response_truncated: false,
  result: null,
  manifest: {
    schema_version: 2,
    bridge_version: "0.12.0",
    protocol_version: 1,
    runtime: { name: "fake", version: "scripted-1", in_flight_recovery: "none" },
    workspace: { alias: "main", slot: 1, relative_cwd: "", profile: "workspace-write" },
    policy: { read_only: false, agent_mode: "workspace-write", policy_sha256: "0".repeat(64) },
    model: { requested: null },
    limits: { max_prompt_bytes: 65536 },
    // bridge-internals §6: the reference manifest records the advisor state.
    advisor: { enabled: false, preflight_status: "disabled" },
    continuation: { from_task_id: null },
    correlation_id: null,
    idempotency_key: null,
    deadline_at: "2026-01-01T02:00:00.000Z"
  },
  manifest_sha256: "1".repeat(64),
  error_code: null,
  error_message: null,
  pending_request_id: null,
  // A field a newer bridge adds.
  progress: { turns: 1 }
})

beforeAll(async () => {
  stack = await startAgentStack({
    prefix: "serverfs-agent-passthrough-",
    startBridge: false,
    setup: (tree) => fs.mkdirSync(`${tree.base}/run`, { mode: 0o700 }),
    env: () => ({ SERVERFS_AGENT_BRIDGE_TIMEOUT_SECONDS: "2" })
  })
  server = net.createServer((socket) => {
    let buffer = ""
    socket.on("error", () => {})
    socket.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const newline = buffer.indexOf("\n")
      if (newline === -1) return
      const request = JSON.parse(buffer.slice(0, newline)) as Received
      buffer = buffer.slice(newline + 1)
      received.push(request)
      const reply = script(request)
      switch (reply.kind) {
        case "result":
          socket.write(
            `${JSON.stringify({ request_id: request.request_id, ok: true, result: reply.result })}\n`
          )
          return
        case "error":
          socket.write(
            `${JSON.stringify({
              request_id: reply.requestId === undefined ? request.request_id : reply.requestId,
              ok: false,
              error: { code: reply.code, message: reply.message }
            })}\n`
          )
          return
        case "raw":
          socket.write(reply.line)
          return
        case "hang":
          return
        case "close":
          socket.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(stack.env.SERVERFS_AGENT_BRIDGE_SOCKET, resolve))
}, 120_000)

afterAll(async () => {
  server?.close()
  await stack?.stop()
})

describe("what serverfs-mcp sends", () => {
  it("one v1 request per call, optional submit keys only when set, the start path normalized", async () => {
    stack.tree.dir("docs/x")
    script = () => ({
      kind: "result",
      result: { task_id: TASK_ID, status: "queued", correlation_id: "c-1", idempotency_key: null }
    })
    received.length = 0
    await ok(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "do it",
      path: "docs/./x/..",
      correlation_id: "c-1"
    })
    expect(received).toHaveLength(1)
    const [request] = received
    expect(Object.keys(request ?? {}).sort()).toEqual(["method", "params", "protocol_version", "request_id"])
    expect(request?.protocol_version).toBe(1)
    expect(request?.request_id).toMatch(/^mcp_[0-9a-f]{24}$/)
    expect(request?.method).toBe("task.submit")
    expect(request?.params).toEqual({
      runtime: "fake",
      workdir: "main",
      path: "docs",
      profile: "workspace-write",
      prompt: "do it",
      correlation_id: "c-1"
    })
    // Answers are sent without null fields; each call has its own request id.
    script = () => ({
      kind: "result",
      result: { task_id: TASK_ID, request_id: "req_1", resolved: true, correlation_id: null }
    })
    await ok(stack.client, "answer_agent_question", {
      task_id: TASK_ID,
      request_id: "req_1",
      answers: [
        { question_id: "q1", selected_option_ids: ["a"] },
        { question_id: "q2", text: "free" }
      ]
    })
    await ok(stack.client, "respond_agent_approval", {
      task_id: TASK_ID,
      request_id: "req_1",
      decision: "deny"
    })
    expect(received.slice(1).map((r) => [r.method, r.params])).toEqual([
      [
        "task.question.answer",
        {
          task_id: TASK_ID,
          request_id: "req_1",
          answers: [
            { question_id: "q1", selected_option_ids: ["a"] },
            { question_id: "q2", selected_option_ids: [], text: "free" }
          ]
        }
      ],
      ["task.approval.respond", { task_id: TASK_ID, request_id: "req_1", decision: "deny" }]
    ])
    expect(new Set(received.map((r) => r.request_id)).size).toBe(received.length)
  })
})

describe("bridge results pass through unchanged", () => {
  it("fields a reference or newer bridge adds reach the client, valid against the outputSchema", async () => {
    const submitted = {
      task_id: TASK_ID,
      status: "queued",
      correlation_id: null,
      idempotency_key: null,
      // tool-contracts §8: a reference bridge with Jev configured adds these.
      preflight: { status: "completed", automatic: false },
      routing_advice: { status: "completed", automatic: false, recommended_route: "codex" }
    }
    script = () => ({ kind: "result", result: submitted })
    expect(
      await ok(stack.client, "submit_agent_task", { runtime: "fake", workdir: "main", prompt: "x" })
    ).toEqual(submitted)

    script = () => ({ kind: "result", result: referenceTaskView() })
    expect(await ok(stack.client, "get_agent_task", { task_id: TASK_ID })).toEqual(referenceTaskView())

    // v0.9 RuntimeInfo adds model_override and model_discovery.
    const runtime = {
      name: "fake",
      available: true,
      version: "scripted-1",
      persistent_session: true,
      live_steer: true,
      interactive_approval: true,
      interactive_question: true,
      in_flight_recovery: "none",
      model_override: false,
      model_discovery: "unsupported"
    }
    script = () => ({ kind: "result", result: { runtimes: [runtime] } })
    expect(await ok(stack.client, "list_agent_runtimes")).toEqual({ runtimes: [runtime] })
  })
})

describe("transport failures", () => {
  const unavailable = "AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable"
  const protocol = "AGENT_BRIDGE_PROTOCOL_ERROR: Agent Bridge protocol failure"
  const get = () => fails(stack.client, "get_agent_task", { task_id: TASK_ID })

  it("a bridge error is relayed as CODE: message, known code or not", async () => {
    script = () => ({ kind: "error", code: "AGENT_TASK_NOT_FOUND", message: "no such task (stand-in)" })
    expect((await get()).text).toBe("AGENT_TASK_NOT_FOUND: no such task (stand-in)")
    script = () => ({ kind: "error", code: "FUTURE_CODE", message: "something new" })
    expect((await get()).text).toBe("FUTURE_CODE: something new")
    // Errors the bridge answers before it knows the request id carry null.
    script = () => ({ kind: "error", code: "PEER_NOT_AUTHORIZED", message: "not you", requestId: null })
    expect((await get()).text).toBe("PEER_NOT_AUTHORIZED: not you")
  })

  it("a malformed response is AGENT_BRIDGE_PROTOCOL_ERROR", async () => {
    const cases: ReadonlyArray<Reply> = [
      { kind: "raw", line: "not json\n" },
      { kind: "raw", line: `${JSON.stringify({ request_id: "mcp_other", ok: true, result: {} })}\n` },
      { kind: "error", code: "lower_case", message: "bad code" },
      { kind: "result", result: { task_id: TASK_ID } },
      { kind: "raw", line: `${JSON.stringify({ ok: "yes" })}\n` }
    ]
    for (const reply of cases) {
      script = () => reply
      expect((await get()).text, JSON.stringify(reply)).toBe(protocol)
    }
  })

  it("no answer, a closed connection or no listener is AGENT_BRIDGE_UNAVAILABLE", async () => {
    script = () => ({ kind: "close" })
    expect((await get()).text).toBe(unavailable)
    // The timeout (2 s here) covers a bridge that never answers.
    script = () => ({ kind: "hang" })
    expect((await get()).text).toBe(unavailable)
    script = () => ({ kind: "raw", line: `{"request_id":` })
    expect((await get()).text).toBe(unavailable)
  })
})
