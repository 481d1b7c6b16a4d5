import fs from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import type { BridgeMethod, DecodedParams, MethodError, MethodParams, MethodResult } from "@serverfs/domain"
import { Effect } from "effect"
import type { RpcHandler } from "../src/index.js"

/** Sample params for every method, in their wire form. */
export const SAMPLE_PARAMS: { readonly [M in BridgeMethod]: MethodParams<M> } = {
  "runtime.list": {},
  "runtime.models": { runtime: "codex", workdir: "wd", task_prompt: "explain the build" },
  "task.submit": {
    runtime: "codex",
    workdir: "wd",
    path: "src",
    profile: "review",
    prompt: "explain the build",
    model: "gpt-5",
    correlation_id: "corr-1"
  },
  "task.get": { task_id: "agt_1" },
  "task.events": { task_id: "agt_1", after_event_id: 3, limit: 50 },
  "task.result.read": { task_id: "agt_1", offset_bytes: 0, max_bytes: 65536 },
  "task.approval.respond": {
    task_id: "agt_1",
    request_id: "req_1",
    decision: "approve_once",
    granted_permission_ids: ["p1"]
  },
  "task.question.answer": {
    task_id: "agt_1",
    request_id: "req_2",
    answers: [
      { question_id: "q1", selected_option_ids: ["o1"] },
      { question_id: "q2", selected_option_ids: [], text: "free text" }
    ]
  },
  "task.message.send": { task_id: "agt_1", message: "also run the tests" },
  "task.cancel": { task_id: "agt_1" },
  "task.list": { statuses: ["running"], workdir: "wd", runtime: "codex", limit: 10 },
  "lease.list": {},
  "lease.recover": { slot: 1, force: false },
  "diagnostics.snapshot": {},
  "diagnostics.task": { task_id: "agt_1" },
  "metrics.snapshot": {}
}

const taskView: MethodResult<"task.get"> = {
  task_id: "agt_1",
  runtime: "codex",
  workdir_alias: "wd",
  workdir_slot: 1,
  relative_cwd: "src",
  profile: "review",
  status: "waiting_for_question",
  created_at: "2025-01-01T00:00:00Z",
  started_at: "2025-01-01T00:00:01Z",
  updated_at: "2025-01-01T00:00:02Z",
  completed_at: null,
  deadline_at: "2025-01-01T02:00:00Z",
  continue_from_task_id: null,
  correlation_id: "corr-1",
  idempotency_key: null,
  requested_model: null,
  final_response: null,
  final_response_truncated: false,
  result: null,
  manifest: {
    schema_version: 2,
    bridge_version: "0.1.0",
    protocol_version: 1,
    runtime: { name: "codex", version: "1.0", in_flight_recovery: "session-resume" },
    workspace: { alias: "wd", slot: 1, relative_cwd: "src", profile: "review" },
    policy: { read_only: false, agent_mode: "review", policy_sha256: "ab".repeat(32) },
    model: { requested: null },
    limits: { max_prompt_bytes: 65536 },
    continuation: { from_task_id: null },
    correlation_id: "corr-1",
    idempotency_key: null,
    deadline_at: "2025-01-01T02:00:00Z"
  },
  manifest_sha256: "cd".repeat(32),
  error_code: null,
  error_message: null,
  pending_request_id: "req_2",
  pending_request: {
    request_id: "req_2",
    task_id: "agt_1",
    kind: "question",
    status: "pending",
    payload: {
      questions: [
        {
          question_id: "q1",
          prompt: "Which one?",
          options: [{ option_id: "o1", label: "First" }],
          multi_select: false,
          allow_free_text: true
        }
      ]
    },
    created_at: "2025-01-01T00:00:02Z",
    expires_at: "2025-01-01T00:30:02Z",
    resolved_at: null,
    resolution: null
  }
}

/** A valid result for every method. */
export const SAMPLE_RESULTS: { readonly [M in BridgeMethod]: MethodResult<M> } = {
  "runtime.list": {
    runtimes: [
      {
        name: "codex",
        available: true,
        version: "1.0",
        persistent_session: true,
        live_steer: true,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "session-resume",
        model_override: true,
        model_discovery: "runtime_catalog"
      },
      { name: "claude", available: false }
    ]
  },
  "runtime.models": {
    runtime: "codex",
    status: "ok",
    scope: "runtime_catalog",
    source: "codex_app_server",
    models: [
      {
        id: "gpt-5",
        display_name: "GPT-5",
        enabled: true,
        is_default: true,
        hidden: false,
        reasoning: { supported: ["low", "high"], default: "low" }
      }
    ],
    model_advice: { status: "disabled", automatic: false }
  },
  "task.submit": { task_id: "agt_1", status: "queued", correlation_id: "corr-1", idempotency_key: null },
  "task.get": taskView,
  "task.events": {
    correlation_id: "corr-1",
    events: [
      {
        event_id: 4,
        task_id: "agt_1",
        correlation_id: "corr-1",
        event_type: "task.started",
        payload: { runtime: "codex" },
        created_at: "2025-01-01T00:00:01Z",
        schema_version: 1
      }
    ],
    next_after_event_id: 4
  },
  "task.result.read": {
    text: "héllo ✓",
    offset_bytes: 0,
    next_offset_bytes: 9,
    eof: true,
    correlation_id: null
  },
  "task.approval.respond": { task_id: "agt_1", request_id: "req_1", resolved: true, correlation_id: null },
  "task.question.answer": { task_id: "agt_1", request_id: "req_2", resolved: true, correlation_id: null },
  "task.message.send": { task_id: "agt_1", accepted: true, correlation_id: null },
  "task.cancel": { task_id: "agt_1", status: "cancelled", correlation_id: null },
  "task.list": {
    tasks: [
      {
        task_id: "agt_1",
        runtime: "codex",
        workdir_alias: "wd",
        workdir_slot: 1,
        profile: "workspace-write",
        status: "running",
        created_at: "2025-01-01T00:00:00Z",
        updated_at: "2025-01-01T00:00:01Z",
        completed_at: null,
        error_code: null,
        pending_request_id: null
      }
    ],
    truncated: false
  },
  "lease.list": {
    workdirs: [
      {
        slot: 1,
        workdir_alias: "wd",
        lease: "held",
        task_id: "agt_1",
        guard: "valid",
        guard_task_id: "agt_1",
        guard_task_status: "running"
      }
    ]
  },
  "lease.recover": {
    slot: 1,
    workdir_alias: "wd",
    outcome: "cleared",
    proof: "reconciled",
    task_id: "agt_1",
    task_status: "interrupted"
  },
  "diagnostics.snapshot": {
    catalog_version: 1,
    limits: {
      max_records: 2048,
      max_bytes: 1048576,
      max_task_records: 64,
      max_task_bytes: 32768,
      max_operation_bytes: 1024,
      seal_reserved_bytes: 512
    },
    generation_started_at: "2025-01-01T00:00:00Z",
    retained_records: 3,
    retained_bytes: 300,
    retained_tasks: 1,
    active_tasks: 0,
    terminal_tasks: 1,
    counters: {
      record_failures: 0,
      admission_failures: 0,
      ordinary_records_dropped: 0,
      truncated_tasks: 0,
      oversized_rejections: 0,
      evictions: 0
    },
    durable_tasks_predate_generation: false
  },
  "diagnostics.task": {
    catalog_version: 1,
    disposition: "not_retained",
    task_id: "agt_1",
    reason: "evicted"
  },
  "metrics.snapshot": {
    started_at: "2025-01-01T00:00:00Z",
    series: [{ name: "serverfs_agent_queue_depth", kind: "gauge", labels: {}, value: 0 }]
  }
}

export const METHODS = Object.keys(SAMPLE_PARAMS) as ReadonlyArray<BridgeMethod>

export interface RecordedCall {
  readonly method: BridgeMethod
  readonly params: unknown
}

/** A handler answering every method with its sample result, recording each call. */
export const recordingHandler = (
  override?: (
    method: BridgeMethod,
    params: unknown
  ) => Effect.Effect<unknown, { _tag: string; message: string }>
): { readonly calls: Array<RecordedCall>; readonly handle: RpcHandler } => {
  const calls: Array<RecordedCall> = []
  const handle: RpcHandler = <M extends BridgeMethod>(method: M, params: DecodedParams<M>) => {
    calls.push({ method, params })
    // The overrides break the contract on purpose (bad results, malformed failures): the server
    // must survive them, so the fixture lets them through as the handler type.
    return override
      ? (override(method, params) as Effect.Effect<MethodResult<M>, MethodError<M>>)
      : Effect.succeed(SAMPLE_RESULTS[method])
  }
  return { calls, handle }
}

/** A fresh base directory (0700, from mkdtemp) removed with the scope. */
export const tempBase = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-rpc-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

export interface RawOutcome {
  /** Complete lines received, parsed as JSON. */
  readonly lines: ReadonlyArray<Record<string, unknown>>
  /** Whether the server closed the connection (rather than the test after enough lines). */
  readonly closed: boolean
}

/**
 * Connect, send `payload` as is, and collect response lines until `until` lines have arrived
 * or, with "close", until the server closes the connection. With `halfClose` the client shuts
 * down its write side after sending.
 */
export const rawExchange = (
  socketPath: string,
  payload: string | Uint8Array,
  until: number | "close",
  options: { readonly halfClose?: boolean } = {}
): Effect.Effect<RawOutcome> =>
  Effect.scoped(
    Effect.flatMap(
      Effect.acquireRelease(
        Effect.sync(() => net.createConnection({ path: socketPath }).on("error", () => {})),
        (socket) => Effect.sync(() => socket.destroy())
      ),
      (socket) =>
        Effect.async<RawOutcome>((resume) => {
          const chunks: Array<Buffer> = []
          const complete = () =>
            Buffer.concat(chunks)
              .toString("utf8")
              .split("\n")
              .slice(0, -1)
              .map((line) => JSON.parse(line) as Record<string, unknown>)
          socket.on("connect", () => {
            if (options.halfClose) socket.end(payload)
            else socket.write(payload)
          })
          socket.on("data", (chunk: Buffer) => {
            chunks.push(chunk)
            if (typeof until === "number" && complete().length >= until) {
              resume(Effect.succeed({ lines: complete(), closed: false }))
            }
          })
          socket.on("close", () => resume(Effect.succeed({ lines: complete(), closed: true })))
        })
    )
  )

/** One request line as the MCP client would send it, with overrides for the tests. */
export const requestLine = (fields: Record<string, unknown>): string =>
  `${JSON.stringify({ protocol_version: 1, request_id: "r1", method: "task.get", params: { task_id: "agt_1" }, ...fields })}\n`

export const openFds = (): number => fs.readdirSync("/proc/self/fd").length
