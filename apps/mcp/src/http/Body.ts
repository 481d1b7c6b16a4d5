import type { IncomingMessage } from "node:http"

/** A request body, or why there is none: over the limit, or the client went away. */
export type BodyRead =
  | { readonly _tag: "Body"; readonly bytes: Buffer }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Aborted" }

/**
 * The whole body, counted as it arrives: a declared Content-Length over the limit is refused
 * before a byte is read, and a chunked (or lying) body is cut off at the first byte past it, so
 * the server never holds more than `maxBytes` of one request. Asynchronous reads only.
 */
export const readBody = (req: IncomingMessage, maxBytes: number): Promise<BodyRead> =>
  new Promise((resolve) => {
    const declared = req.headers["content-length"]
    if (declared !== undefined && Number(declared) > maxBytes) {
      resolve({ _tag: "TooLarge" })
      return
    }
    const chunks: Array<Buffer> = []
    let length = 0
    let settled = false
    const settle = (result: BodyRead) => {
      if (settled) return
      settled = true
      req.off("data", onData)
      resolve(result)
    }
    const onData = (chunk: Buffer) => {
      length += chunk.length
      if (length > maxBytes) {
        // Stop reading: what is already buffered is dropped and the connection is closed after
        // the 413 (HttpServer.ts), so the rest is never accumulated.
        req.pause()
        chunks.length = 0
        settle({ _tag: "TooLarge" })
      } else chunks.push(chunk)
    }
    req.on("data", onData)
    req.once("end", () => settle({ _tag: "Body", bytes: Buffer.concat(chunks, length) }))
    req.once("aborted", () => settle({ _tag: "Aborted" }))
    req.once("error", () => settle({ _tag: "Aborted" }))
    req.once("close", () => settle({ _tag: "Aborted" }))
  })
