import { randomBytes } from "node:crypto"
import * as net from "node:net"

/**
 * A raw NDJSON client of the bridge socket for protocol tests: it writes exactly the bytes it is
 * given and reports every line the bridge answers and whether the bridge closed the connection.
 * No envelope checks of its own — that is the point.
 */
export interface RawExchange {
  /** Response lines, parsed (a line that is not JSON is kept as its text). */
  readonly responses: ReadonlyArray<unknown>
  /** The bridge closed (or reset) the connection before we did. */
  readonly closedByPeer: boolean
}

export interface RawExchangeOptions {
  /** Stop (and close our side) once this many lines have arrived. */
  readonly lines?: number
  /** Give up waiting after this long; what arrived so far is returned. */
  readonly timeoutMs?: number
}

export const rawExchange = (
  socketPath: string,
  payload: string | Uint8Array,
  options: RawExchangeOptions = {}
): Promise<RawExchange> =>
  new Promise((resolve, reject) => {
    const socket = net.createConnection({ path: socketPath })
    const responses: unknown[] = []
    let buffer = ""
    let settled = false
    const finish = (closedByPeer: boolean): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ responses, closedByPeer })
    }
    const timer = setTimeout(() => finish(false), options.timeoutMs ?? 15_000)
    socket.on("connect", () => {
      socket.write(payload)
    })
    socket.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      let newline = buffer.indexOf("\n")
      while (newline !== -1) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        try {
          responses.push(JSON.parse(line))
        } catch {
          responses.push(line)
        }
        newline = buffer.indexOf("\n")
      }
      if (options.lines !== undefined && responses.length >= options.lines) finish(false)
    })
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset while we were still writing is the bridge hanging up on us.
      if (error.code === "EPIPE" || error.code === "ECONNRESET") finish(true)
      else if (!settled) {
        settled = true
        clearTimeout(timer)
        reject(error)
      }
    })
    socket.on("end", () => finish(true))
    socket.on("close", () => finish(true))
  })

/** One well-formed request line of protocol v1. */
export const requestLine = (method: string, params: Record<string, unknown>, requestId?: string): string =>
  `${JSON.stringify({
    protocol_version: 1,
    request_id: requestId ?? `test_${randomBytes(12).toString("hex")}`,
    method,
    params
  })}\n`

export interface BridgeResponse {
  readonly request_id: string | null
  readonly ok: boolean
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: string; readonly message: string }
}

/** A well-formed call on its own connection: its one response. */
export const bridgeCall = async (
  socketPath: string,
  method: string,
  params: Record<string, unknown>
): Promise<BridgeResponse> => {
  const exchange = await rawExchange(socketPath, requestLine(method, params), { lines: 1 })
  const [response] = exchange.responses
  if (typeof response !== "object" || response === null) {
    throw new Error(`the bridge gave no response to ${method}`)
  }
  return response as BridgeResponse
}
