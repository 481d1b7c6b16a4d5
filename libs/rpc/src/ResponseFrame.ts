import {
  BridgeProtocolError,
  errorToWire,
  type FrozenError,
  MAX_FRAME_BYTES,
  ResponseTooLarge
} from "@serverfs/domain"
import { stringifyJson } from "./StrictJson.js"

/**
 * The server's response lines (bridge-internals §1.4): `{request_id, ok:true, result}` or
 * `{request_id|null, ok:false, error:{code, message}}`, one line each, never over 1 MiB.
 *
 * Whatever the handler produced, what goes on the wire is a well-formed frame: a value with no
 * faithful JSON form becomes BRIDGE_PROTOCOL_ERROR, and a line over the limit is replaced by
 * RESPONSE_TOO_LARGE (with request_id null in the pathological case where even that
 * replacement would not fit, i.e. a request_id of nearly 1 MiB).
 */
export const BRIDGE_FAULT_MESSAGE = "the bridge failed to process the request"

/** The answer to a handler's defect: a fixed message, the details stay in the bridge's log. */
export const bridgeFault = (): BridgeProtocolError =>
  new BridgeProtocolError({ message: BRIDGE_FAULT_MESSAGE })

const line = (text: string): Uint8Array => Buffer.from(`${text}\n`, "utf8")

/** The text's line, encoded once, if the text (without its "\n") fits in a frame. */
const lineIfFits = (text: string): Uint8Array | undefined => {
  const bytes = line(text)
  return bytes.length - 1 <= MAX_FRAME_BYTES ? bytes : undefined
}

const errorText = (requestId: string | null, error: FrozenError): string =>
  JSON.stringify({ request_id: requestId, ok: false, error: errorToWire(error) })

const tooLarge = (requestId: string | null): Uint8Array => {
  const error = new ResponseTooLarge({ message: `the response exceeds ${MAX_FRAME_BYTES} bytes` })
  return lineIfFits(errorText(requestId, error)) ?? line(errorText(null, error))
}

/** The frame for an error response (the error's message is already safe to show). */
export const errorFrame = (requestId: string | null, error: FrozenError): Uint8Array =>
  lineIfFits(errorText(requestId, error)) ?? tooLarge(requestId)

/** The frame for a success response whose `result` is already encoded by the method's schema. */
export const successFrame = (requestId: string, result: unknown): Uint8Array => {
  const text = stringifyJson({ request_id: requestId, ok: true, result })
  if (text === undefined) return errorFrame(requestId, bridgeFault())
  return lineIfFits(text) ?? tooLarge(requestId)
}
