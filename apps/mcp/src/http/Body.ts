import type { IncomingMessage } from "node:http"
import type { BodyBudget } from "./BodyBudget.js"

/**
 * A request body, or why there is none: over the limit, over the shared budget, or the client
 * went away. A `Body` stays charged to the budget until `release` (its request is answered).
 */
export type BodyRead =
  | { readonly _tag: "Body"; readonly bytes: Buffer; readonly release: () => void }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "OverBudget" }
  | { readonly _tag: "Aborted" }

/**
 * The whole body, counted as it arrives: a declared Content-Length over the limit is refused
 * before a byte is read, and a chunked (or lying) body is cut off at the first byte past it, so
 * the server never holds more than `maxBytes` of one request — nor, over all requests, more than
 * the budget. Asynchronous reads only.
 */
export const readBody = (req: IncomingMessage, maxBytes: number, budget: BodyBudget): Promise<BodyRead> =>
  new Promise((resolve) => {
    const declared = req.headers["content-length"]
    if (declared !== undefined && Number(declared) > maxBytes) {
      resolve({ _tag: "TooLarge" })
      return
    }
    const chunks: Array<Buffer> = []
    let length = 0
    let settled = false
    let released = false
    const release = () => {
      if (released) return
      released = true
      budget.give(length)
    }
    const settle = (result: BodyRead) => {
      if (settled) return
      settled = true
      req.off("data", onData)
      if (result._tag !== "Body") release()
      resolve(result)
    }
    // Stop reading: what is already buffered is dropped and the connection is closed after the
    // refusal (McpRoute.ts), so the rest is never accumulated.
    const refuse = (why: "TooLarge" | "OverBudget") => {
      req.pause()
      chunks.length = 0
      settle({ _tag: why })
    }
    const onData = (chunk: Buffer) => {
      if (length + chunk.length > maxBytes) return refuse("TooLarge")
      if (!budget.take(chunk.length)) return refuse("OverBudget")
      length += chunk.length
      chunks.push(chunk)
    }
    req.on("data", onData)
    req.once("end", () => settle({ _tag: "Body", bytes: Buffer.concat(chunks, length), release }))
    req.once("aborted", () => settle({ _tag: "Aborted" }))
    req.once("error", () => settle({ _tag: "Aborted" }))
    req.once("close", () => settle({ _tag: "Aborted" }))
  })
