import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A loopback-only fake of the OpenAI Responses API (`POST /v1/responses`, streamed as SSE), for
 * running the real Codex CLI offline (codex-app-server-offline §3). Each test scripts what the
 * "model" answers, reply by reply, and reads back what Codex sent — e.g. the output a declined
 * command produced, or the text a steer appended.
 *
 * A request takes the next scripted reply; with none left it gets `fallback` (a plain message),
 * so an unexpected extra request is visible in `requests` rather than hanging the turn.
 */
export interface FakeQuestion {
  readonly id: string
  readonly header: string
  readonly question: string
  readonly options: ReadonlyArray<{ readonly label: string; readonly description: string }>
}

export type FakeReply =
  /**
   * An assistant message (phase `final_answer` unless given), optionally preceded in the same
   * response by a `commentary` message (`preamble`).
   */
  | {
      readonly type: "message"
      readonly text: string
      readonly phase?: "commentary" | "final_answer" | null
      readonly preamble?: string
    }
  /** An `exec_command` call; with `escalate` (a justification) it asks for sandbox escalation. */
  | {
      readonly type: "shell"
      readonly command: string
      readonly escalate?: string
      readonly workdir?: string
    }
  /** A freeform `apply_patch` call with the given patch text. */
  | { readonly type: "patch"; readonly patch: string }
  /** A `request_permissions` call. */
  | {
      readonly type: "permissions"
      readonly reason: string
      readonly permissions: Readonly<Record<string, unknown>>
    }
  /** Any function call, e.g. an MCP tool (`namespace` "mcp__<server>", `name` the tool). */
  | {
      readonly type: "call"
      readonly name: string
      readonly namespace?: string
      readonly arguments: Readonly<Record<string, unknown>>
    }
  /** A `request_user_input` call (Codex offers that tool in plan mode only). */
  | { readonly type: "ask"; readonly questions: ReadonlyArray<FakeQuestion> }
  /** A message streamed as `ticks` deltas `intervalMs` apart (for steer and interrupt). */
  | { readonly type: "slow"; readonly text: string; readonly ticks: number; readonly intervalMs: number }
  /** An HTTP error status with a JSON error body. */
  | { readonly type: "http-error"; readonly status: number; readonly message: string }

export type ScriptedReply = FakeReply | ((request: RecordedRequest) => FakeReply)

export interface ToolOutput {
  readonly callId: string
  readonly type: string
  readonly output: string
}

export interface RecordedRequest {
  readonly index: number
  readonly path: string
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: Record<string, unknown>
  /** Every user text of the input, in order (the prompt, steer messages, ...). */
  readonly userTexts: ReadonlyArray<string>
  /** Every tool output of the input (function_call_output, custom_tool_call_output). */
  readonly toolOutputs: ReadonlyArray<ToolOutput>
  /** The tool names Codex offered. */
  readonly toolNames: ReadonlyArray<string>
  /** The reply this request got (its `type`), "fallback" when the script was empty. */
  readonly replied: string
  /** Set when the client closed the stream before it ended (interrupt, steer). */
  aborted: boolean
  /** Set when the response was fully written. */
  finished: boolean
}

export interface FakeResponsesServer {
  /** `http://127.0.0.1:<port>/v1`: the provider base_url. */
  readonly baseUrl: string
  readonly port: number
  /** Append replies to the script. */
  readonly script: (...replies: ReadonlyArray<ScriptedReply>) => void
  /** Drop the remaining script and the recorded requests (between tests sharing a server). */
  readonly reset: () => void
  readonly requests: () => ReadonlyArray<RecordedRequest>
  /** How many scripted replies are still unused. */
  readonly pending: () => number
  /** Resolves with the first recorded request matching `predicate` (bounded). */
  readonly waitFor: (
    predicate: (request: RecordedRequest) => boolean,
    what: string,
    timeoutMs?: number
  ) => Promise<RecordedRequest>
  readonly close: () => Promise<void>
}

const DEFAULT_FALLBACK: FakeReply = { type: "message", text: "(unscripted reply)" }

interface InputItem {
  readonly type?: unknown
  readonly role?: unknown
  readonly content?: unknown
  readonly call_id?: unknown
  readonly output?: unknown
}

const textOfContent = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((c: { readonly text?: unknown }) => (typeof c?.text === "string" ? c.text : "")).join("")
}

const outputText = (output: unknown): string => {
  if (typeof output === "string") return output
  if (Array.isArray(output)) return textOfContent(output)
  if (output !== null && typeof output === "object") {
    const o = output as { readonly content?: unknown }
    if (typeof o.content === "string") return o.content
  }
  return JSON.stringify(output)
}

const summarize = (body: Record<string, unknown>) => {
  const input = Array.isArray(body.input) ? (body.input as ReadonlyArray<InputItem>) : []
  const userTexts: string[] = []
  const toolOutputs: ToolOutput[] = []
  for (const item of input) {
    if (item.type === "message" && item.role === "user") userTexts.push(textOfContent(item.content))
    if (
      (item.type === "function_call_output" || item.type === "custom_tool_call_output") &&
      typeof item.call_id === "string"
    ) {
      toolOutputs.push({ callId: item.call_id, type: item.type, output: outputText(item.output) })
    }
  }
  const tools = Array.isArray(body.tools) ? (body.tools as ReadonlyArray<Record<string, unknown>>) : []
  const toolNames = tools.flatMap((t) => (typeof t.name === "string" ? [t.name] : []))
  return { userTexts, toolOutputs, toolNames }
}

const sse = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15 }

/** The output item of a (non-streaming) reply. */
const itemOf = (reply: Exclude<FakeReply, { type: "slow" | "http-error" }>, n: number) => {
  const callId = `call_${n}`
  switch (reply.type) {
    case "message":
      return {
        type: "message",
        role: "assistant",
        id: `msg_${n}`,
        ...(reply.phase === null ? {} : { phase: reply.phase ?? "final_answer" }),
        content: [{ type: "output_text", text: reply.text, annotations: [] }]
      }
    case "shell":
      return {
        type: "function_call",
        id: `fc_${n}`,
        call_id: callId,
        name: "exec_command",
        arguments: JSON.stringify({
          cmd: reply.command,
          ...(reply.workdir === undefined ? {} : { workdir: reply.workdir }),
          ...(reply.escalate === undefined
            ? {}
            : { sandbox_permissions: "require_escalated", justification: reply.escalate })
        })
      }
    case "patch":
      return {
        type: "custom_tool_call",
        id: `ctc_${n}`,
        call_id: callId,
        name: "apply_patch",
        input: reply.patch
      }
    case "permissions":
      return {
        type: "function_call",
        id: `fc_${n}`,
        call_id: callId,
        name: "request_permissions",
        arguments: JSON.stringify({ reason: reply.reason, permissions: reply.permissions })
      }
    case "call":
      return {
        type: "function_call",
        id: `fc_${n}`,
        call_id: callId,
        name: reply.name,
        ...(reply.namespace === undefined ? {} : { namespace: reply.namespace }),
        arguments: JSON.stringify(reply.arguments)
      }
    case "ask":
      return {
        type: "function_call",
        id: `fc_${n}`,
        call_id: callId,
        name: "request_user_input",
        arguments: JSON.stringify({ questions: reply.questions })
      }
  }
}

export const startFakeResponsesServer = async (
  options: { readonly fallback?: FakeReply } = {}
): Promise<FakeResponsesServer> => {
  const fallback = options.fallback ?? DEFAULT_FALLBACK
  let queue: ScriptedReply[] = []
  let recorded: RecordedRequest[] = []
  let counter = 0
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const w of [...waiters]) w()
  }

  const respond = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
    let body: Record<string, unknown>
    try {
      body = JSON.parse(raw) as Record<string, unknown>
    } catch {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "bad json" } }))
      return
    }
    const n = ++counter
    const next = queue.shift()
    const summary = summarize(body)
    const partial = {
      index: recorded.length,
      path: req.url ?? "",
      headers: { ...req.headers },
      body,
      ...summary,
      aborted: false,
      finished: false
    }
    const reply: FakeReply =
      next === undefined
        ? fallback
        : typeof next === "function"
          ? next({ ...partial, replied: "function" })
          : next
    const record: RecordedRequest = { ...partial, replied: next === undefined ? "fallback" : reply.type }
    recorded.push(record)
    res.on("close", () => {
      if (!record.finished) record.aborted = true
      notify()
    })
    notify()

    if (reply.type === "http-error") {
      res.writeHead(reply.status, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: reply.message, type: "server_error", code: null } }))
      record.finished = true
      notify()
      return
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive"
    })
    const responseId = `resp_${n}`
    res.write(sse("response.created", { response: { id: responseId } }))
    const finish = (item: Record<string, unknown>) => {
      const preamble = reply.type === "message" ? reply.preamble : undefined
      let index = 0
      if (preamble !== undefined) {
        const commentary = itemOf({ type: "message", text: preamble, phase: "commentary" }, n)
        res.write(
          sse("response.output_item.done", {
            output_index: index++,
            item: { ...commentary, id: `msg_${n}_pre` }
          })
        )
      }
      res.write(sse("response.output_item.done", { output_index: index, item }))
      res.write(sse("response.completed", { response: { id: responseId, usage } }))
      record.finished = true
      res.end()
      notify()
    }
    if (reply.type !== "slow") {
      finish(itemOf(reply, n))
      return
    }
    const itemId = `msg_${n}`
    res.write(
      sse("response.output_item.added", {
        output_index: 0,
        item: { type: "message", role: "assistant", id: itemId, content: [] }
      })
    )
    let tick = 0
    const timer = setInterval(() => {
      if (res.destroyed || res.writableEnded) {
        clearInterval(timer)
        return
      }
      tick++
      res.write(sse("response.output_text.delta", { item_id: itemId, output_index: 0, delta: `.` }))
      if (tick >= reply.ticks) {
        clearInterval(timer)
        finish(itemOf({ type: "message", text: reply.text }, n))
      }
    }, reply.intervalMs)
    res.on("close", () => clearInterval(timer))
  }

  const server = http.createServer((req, res) => {
    // One route (the server listens on 127.0.0.1 only).
    if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/responses")) {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "not found" } }))
      return
    }
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => respond(req, res, Buffer.concat(chunks).toString("utf8")))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    script: (...replies) => {
      queue.push(...replies)
    },
    reset: () => {
      queue = []
      recorded = []
    },
    requests: () => recorded,
    pending: () => queue.length,
    waitFor: (predicate, what, timeoutMs = 30_000) =>
      new Promise<RecordedRequest>((resolve, reject) => {
        const check = () => {
          const found = recorded.find(predicate)
          if (found === undefined) return false
          clearTimeout(timer)
          waiters.delete(onChange)
          resolve(found)
          return true
        }
        const onChange = () => {
          check()
        }
        const timer = setTimeout(() => {
          waiters.delete(onChange)
          reject(new Error(`fake Responses server: timed out waiting for ${what}`))
        }, timeoutMs)
        if (!check()) waiters.add(onChange)
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
