import type { IncomingMessage, ServerResponse } from "node:http"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import type { HttpSettings } from "@serverfs/policy"
import { readBody } from "./Body.js"
import type { BodyBudget } from "./BodyBudget.js"
import type { GuardPolicy } from "./Guards.js"
import { refuse } from "./Responses.js"
import type { Session, Sessions } from "./Sessions.js"

export interface McpRouteContext {
  readonly guards: GuardPolicy
  /** The same allowlists handed to the SDK's own DNS-rebinding check (a second line of defence). */
  readonly sdkHosts: Array<string>
  readonly sdkOrigins: Array<string>
  readonly settings: HttpSettings
  readonly maxBodyBytes: number
  readonly bodyBudget: BodyBudget
  readonly sessions: Sessions
  readonly make: () => Server
  readonly now: () => number
  readonly newSessionId: () => string
}

const sessionHeader = (req: IncomingMessage): string | undefined => {
  const value = req.headers["mcp-session-id"]
  return typeof value === "string" && value !== "" ? value : undefined
}

const isInitialize = (body: unknown): boolean =>
  isInitializeRequest(body) || (Array.isArray(body) && body.some((m) => isInitializeRequest(m)))

/** Counts a request against its session until its response ends (or the client goes away). */
const track = (
  ctx: McpRouteContext,
  res: ServerResponse,
  session: () => Session | undefined,
  kind: "posts" | "streams"
) => {
  const s = session()
  if (s !== undefined) {
    s[kind]++
    s.lastSeen = ctx.now()
  }
  res.once("close", () => {
    const current = s ?? session()
    if (current !== undefined) {
      // A session created by this very request was counted when it was added.
      current[kind] = Math.max(0, current[kind] - 1)
      current.lastSeen = ctx.now()
    }
  })
}

/**
 * /mcp: POST (JSON-RPC in), GET (the server's stream of a session), DELETE (end a session).
 * A request without a session id may only initialize; a GET or DELETE without one is refused and
 * never creates or touches a session. An unknown (or expired) session id gets 404, so a client
 * re-initializes. Everything else is the SDK's transport, one per session.
 */
export const handleMcp = async (
  ctx: McpRouteContext,
  req: IncomingMessage,
  res: ServerResponse
): Promise<void> => {
  const method = req.method ?? ""
  if (method !== "POST" && method !== "GET" && method !== "DELETE") {
    refuse(res, 405, "Method Not Allowed", { allow: "GET, POST, DELETE" })
    return
  }
  const id = sessionHeader(req)
  const session = id === undefined ? undefined : ctx.sessions.get(id)
  if (id !== undefined && session === undefined) {
    refuse(res, 404, "Session not found")
    return
  }
  if (method !== "POST") {
    if (session === undefined) {
      refuse(res, 400, "Bad Request: Mcp-Session-Id header is required")
      return
    }
    if (method === "GET") track(ctx, res, () => session, "streams")
    else session.lastSeen = ctx.now()
    await session.transport.handleRequest(req, res)
    return
  }
  if (session !== undefined && session.posts >= ctx.settings.maxRequestsPerSession) {
    refuse(res, 429, "Too Many Requests: this session has too many requests in flight")
    return
  }
  // Counted from here, so a request still sending its body holds its place too.
  if (session !== undefined) track(ctx, res, () => session, "posts")
  const body = await readBody(req, ctx.maxBodyBytes, ctx.bodyBudget)
  if (body._tag === "Aborted") return
  if (body._tag === "TooLarge" || body._tag === "OverBudget") {
    if (body._tag === "TooLarge") refuse(res, 413, "Payload Too Large")
    else
      refuse(res, 503, "Service Unavailable: too many request bytes in flight; try again later", {
        "retry-after": "1"
      })
    lingeringClose(req, res)
    return
  }
  // The body (and what is parsed from it) is held until the request is answered.
  res.once("close", body.release)
  let parsed: unknown
  try {
    parsed = JSON.parse(body.bytes.toString("utf8"))
  } catch {
    refuse(res, 400, "Parse error: the body is not JSON")
    return
  }
  if (session !== undefined) {
    await session.transport.handleRequest(req, res, parsed)
    return
  }
  if (!isInitialize(parsed)) {
    refuse(res, 400, "Bad Request: Mcp-Session-Id header is required")
    return
  }
  if (ctx.sessions.count() >= ctx.settings.maxSessions) {
    refuse(res, 503, "Service Unavailable: too many MCP sessions; try again later", { "retry-after": "5" })
    return
  }
  await initialize(ctx, req, res, parsed)
}

/**
 * After a refusal of a body still arriving: the answer, then our side of the connection ends and
 * what the client still sends is discarded (never accumulated) for at most a second, so the
 * answer reaches it instead of being lost to a reset of a connection with unread data.
 */
const lingeringClose = (req: IncomingMessage, res: ServerResponse) =>
  res.once("finish", () => {
    const socket = req.socket
    socket.end()
    req.resume()
    const timer = setTimeout(() => socket.destroy(), 1000)
    timer.unref()
    socket.once("close", () => clearTimeout(timer))
  })

/** A new session: its own SDK server and transport, in the table once the SDK has given it an id. */
const initialize = async (
  ctx: McpRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  parsed: unknown
) => {
  ctx.sessions.reserve()
  let reserved = true
  let sessionId: string | undefined
  const server = ctx.make()
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: ctx.newSessionId,
    onsessioninitialized: (sid) => {
      sessionId = sid
      ctx.sessions.release()
      reserved = false
      ctx.sessions.add(sid, { transport, server, lastSeen: ctx.now(), posts: 1, streams: 0 })
    },
    enableDnsRebindingProtection: true,
    allowedHosts: ctx.sdkHosts,
    ...(ctx.sdkOrigins.length > 0 ? { allowedOrigins: ctx.sdkOrigins } : {})
  })
  // DELETE or a closed transport takes the session out of the table.
  server.onclose = () => {
    if (sessionId !== undefined) void ctx.sessions.close(sessionId)
  }
  track(ctx, res, () => (sessionId === undefined ? undefined : ctx.sessions.get(sessionId)), "posts")
  try {
    await server.connect(transport)
    await transport.handleRequest(req, res, parsed)
  } finally {
    if (reserved) ctx.sessions.release()
    // An initialize the SDK refused leaves no half-made session behind.
    if (sessionId === undefined) await server.close().catch(() => undefined)
  }
}
