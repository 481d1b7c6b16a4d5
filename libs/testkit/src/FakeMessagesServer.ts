import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A loopback-only fake of the Anthropic Messages API (`POST /v1/messages?beta=true`), enough for
 * the real Claude Code CLI to run offline (shared/reference/claude-agent-sdk-offline.md "Fake
 * server"). Each test scripts the replies; every request is recorded so a test can assert what
 * the model was shown (the AskUserQuestion answers, a resumed conversation, a steering message).
 *
 * Replies are streamed as server-sent events in the shapes the CLI accepts. Unknown message roles
 * (the CLI sends a `role:"system"` environment block) are accepted; count_tokens, /v1/models and
 * non-stream requests are answered too, anything else is a 404.
 */

export type MessagesReply =
  /** Assistant text, optionally streamed slowly (for interrupts and steering). */
  | {
      readonly kind: "text"
      readonly text: string
      /** Split the text into this many deltas (default 1). */
      readonly chunks?: number
      /** Delay before each delta, in ms (default 0). */
      readonly chunkDelayMs?: number
    }
  /** One tool_use block (optionally after a text block); stop_reason tool_use. */
  | {
      readonly kind: "tool_use"
      readonly name: string
      readonly input: Record<string, unknown>
      readonly id?: string
      readonly text?: string
    }
  /** An HTTP error with the API's error body. */
  | { readonly kind: "error"; readonly status: number; readonly errorType: string; readonly message: string }

export const textReply = (
  value: string,
  options: { chunks?: number; chunkDelayMs?: number } = {}
): MessagesReply => ({
  kind: "text",
  text: value,
  ...options
})

export const toolUseReply = (
  name: string,
  input: Record<string, unknown>,
  options: { id?: string; text?: string } = {}
): MessagesReply => ({ kind: "tool_use", name, input, ...options })

export const bashReply = (command: string, description = "Run a command", id?: string): MessagesReply =>
  toolUseReply("Bash", { command, description }, id === undefined ? {} : { id })

/**
 * A Bash call that runs for `seconds`, through python3 (Claude Code 2.1.332 blocks `sleep N; …`
 * chains); `marker` (an identifier) makes its process findable by command line.
 */
export const longCommandReply = (seconds: number, marker: string): MessagesReply =>
  bashReply(`python3 -c "import time; ${marker}=1; time.sleep(${seconds})"`, "Wait")

export interface ClaudeAskedQuestion {
  readonly question: string
  readonly header: string
  readonly options: ReadonlyArray<{ readonly label: string; readonly description: string }>
  readonly multiSelect: boolean
}

export const askReply = (questions: ReadonlyArray<ClaudeAskedQuestion>, id?: string): MessagesReply =>
  toolUseReply("AskUserQuestion", { questions }, id === undefined ? {} : { id })

export const httpErrorReply = (status: number, errorType: string, message: string): MessagesReply => ({
  kind: "error",
  status,
  errorType,
  message
})

export interface MessagesRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The parsed JSON body (undefined when there was none or it was not JSON). */
  readonly body: MessagesBody | undefined
}

export interface MessagesBody {
  readonly model?: string
  readonly stream?: boolean
  readonly system?: unknown
  readonly tools?: ReadonlyArray<{ readonly name?: string }>
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
  readonly [key: string]: unknown
}

/** Decides the reply of the `index`-th model request (0-based, counted since the last script). */
export type MessagesScript = (request: MessagesRequest, index: number) => MessagesReply

export interface FakeMessagesServer {
  /** `http://127.0.0.1:<port>`: the ANTHROPIC_BASE_URL of the CLI under test. */
  readonly url: string
  /** Replace the script (and restart the request index at 0). */
  readonly script: (script: MessagesScript) => void
  /** MessagesScript the next model requests in order; later ones get `fallback` (default: text "done"). */
  readonly queue: (replies: ReadonlyArray<MessagesReply>, fallback?: MessagesReply) => void
  /** Every request received so far, in order (all endpoints). */
  readonly requests: () => ReadonlyArray<MessagesRequest>
  /** The model requests (`POST /v1/messages`, not count_tokens) so far. */
  readonly modelRequests: () => ReadonlyArray<MessagesRequest>
  /** Forget the recorded requests. */
  readonly clear: () => void
  readonly close: () => Promise<void>
}

const sse = (res: http.ServerResponse, event: string, data: unknown) =>
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

/** A unique provider-side id (message, tool use): random, so no counter is shared across servers. */
const nextId = (prefix: string) => `${prefix}_fake${randomBytes(6).toString("hex")}`

const usage = {
  input_tokens: 100,
  output_tokens: 1,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0
}

const split = (value: string, parts: number): Array<string> => {
  const n = Math.max(1, Math.min(parts, value.length))
  const size = Math.ceil(value.length / n)
  const out: Array<string> = []
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size))
  return out.length === 0 ? [""] : out
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const streamReply = async (res: http.ServerResponse, model: string, reply: MessagesReply): Promise<void> => {
  const closed = () => res.destroyed || res.writableEnded
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "request-id": nextId("req")
  })
  const message = {
    id: nextId("msg"),
    type: "message",
    role: "assistant",
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage
  }
  sse(res, "message_start", { type: "message_start", message })
  sse(res, "ping", { type: "ping" })
  let index = 0
  const textBlock = async (value: string, chunks: number, delay: number) => {
    sse(res, "content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "text", text: "" }
    })
    for (const part of split(value, chunks)) {
      if (delay > 0) await wait(delay)
      if (closed()) return
      sse(res, "content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: part }
      })
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index })
    index += 1
  }
  let stopReason = "end_turn"
  if (reply.kind === "text") {
    await textBlock(reply.text, reply.chunks ?? 1, reply.chunkDelayMs ?? 0)
  } else if (reply.kind === "tool_use") {
    if (reply.text !== undefined) await textBlock(reply.text, 1, 0)
    const json = JSON.stringify(reply.input)
    const half = Math.floor(json.length / 2)
    sse(res, "content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: reply.id ?? nextId("toolu"), name: reply.name, input: {} }
    })
    for (const part of [json.slice(0, half), json.slice(half)]) {
      sse(res, "content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: part }
      })
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index })
    stopReason = "tool_use"
  }
  if (closed()) return
  sse(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 20 }
  })
  sse(res, "message_stop", { type: "message_stop" })
  res.end()
}

const jsonReply = (res: http.ServerResponse, model: string, reply: MessagesReply) => {
  const content =
    reply.kind === "text"
      ? [{ type: "text", text: reply.text }]
      : reply.kind === "tool_use"
        ? [
            ...(reply.text === undefined ? [] : [{ type: "text", text: reply.text }]),
            { type: "tool_use", id: reply.id ?? nextId("toolu"), name: reply.name, input: reply.input }
          ]
        : []
  res.writeHead(200, { "content-type": "application/json" })
  res.end(
    JSON.stringify({
      id: nextId("msg"),
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: reply.kind === "tool_use" ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage
    })
  )
}

export const startFakeMessagesServer = async (): Promise<FakeMessagesServer> => {
  const recorded: Array<MessagesRequest> = []
  let script: MessagesScript = () => textReply("done")
  let index = 0

  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      let body: MessagesBody | undefined
      try {
        body = raw === "" ? undefined : (JSON.parse(raw) as MessagesBody)
      } catch {
        body = undefined
      }
      const url = req.url ?? "/"
      const entry: MessagesRequest = { method: req.method ?? "", path: url, headers: req.headers, body }
      recorded.push(entry)
      const pathname = url.split("?")[0]
      const model = typeof body?.model === "string" ? body.model : "claude-fake"
      if (req.method === "POST" && pathname === "/v1/messages/count_tokens") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ input_tokens: 100 }))
        return
      }
      if (req.method === "GET" && pathname === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ data: [], has_more: false, first_id: null, last_id: null }))
        return
      }
      if (req.method !== "POST" || pathname !== "/v1/messages") {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not found" } }))
        return
      }
      const reply = script(entry, index)
      index += 1
      if (reply.kind === "error") {
        res.writeHead(reply.status, { "content-type": "application/json", "request-id": nextId("req") })
        res.end(JSON.stringify({ type: "error", error: { type: reply.errorType, message: reply.message } }))
        return
      }
      if (body?.stream === true) {
        streamReply(res, model, reply).catch(() => res.destroy())
      } else {
        jsonReply(res, model, reply)
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    // Loopback only: the CLI under test must never need anything else.
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  const isModelRequest = (r: MessagesRequest) =>
    r.method === "POST" && r.path.split("?")[0] === "/v1/messages"
  return {
    url: `http://127.0.0.1:${port}`,
    script: (next) => {
      script = next
      index = 0
    },
    queue: (replies, fallback = textReply("done")) => {
      script = (_request, i) => replies[i] ?? fallback
      index = 0
    },
    requests: () => [...recorded],
    modelRequests: () => recorded.filter(isModelRequest),
    clear: () => {
      recorded.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

// ---- reading what the model was shown --------------------------------------------------------

/** Every text the request's messages carry (text blocks, tool_result contents), in order. */
export const messageTexts = (request: MessagesRequest): Array<string> => {
  const out: Array<string> = []
  const visit = (content: unknown) => {
    if (typeof content === "string") {
      out.push(content)
      return
    }
    if (!Array.isArray(content)) return
    for (const block of content as ReadonlyArray<Record<string, unknown>>) {
      if (block.type === "text" && typeof block.text === "string") out.push(block.text)
      if (block.type === "tool_result") visit(block.content)
    }
  }
  for (const message of request.body?.messages ?? []) visit(message.content)
  return out
}

/** The tool_result blocks of the request's LAST message (what the tool just returned). */
export const lastToolResults = (
  request: MessagesRequest
): Array<{ readonly toolUseId: string; readonly isError: boolean; readonly text: string }> => {
  const messages = request.body?.messages ?? []
  const last = messages[messages.length - 1]
  if (last === undefined || !Array.isArray(last.content)) return []
  return (last.content as ReadonlyArray<Record<string, unknown>>)
    .filter((b) => b.type === "tool_result")
    .map((b) => {
      const inner = b.content
      const body =
        typeof inner === "string"
          ? inner
          : Array.isArray(inner)
            ? (inner as ReadonlyArray<Record<string, unknown>>)
                .map((c) => (typeof c.text === "string" ? c.text : ""))
                .join("")
            : ""
      return { toolUseId: String(b.tool_use_id), isError: b.is_error === true, text: body }
    })
}
