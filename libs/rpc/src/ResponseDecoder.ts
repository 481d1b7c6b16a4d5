import {
  AGENT_ERRORS,
  AgentBridgeProtocolError,
  type AgentError,
  type AgentErrorCode,
  agentError,
  type BridgeCallError,
  RelayedBridgeError
} from "@serverfs/domain"
import { Either, Schema } from "effect"
import { isPlainObject, parseJsonLine } from "./StrictJson.js"

/**
 * The client's checks on one response line (bridge-internals §1.4, tool-contracts §8), as a
 * pure function.
 *
 * - Success must be exactly `{request_id, ok:true, result}` with our request_id and a result
 *   object that passes the method's result schema. Keys the schema does not know are kept, so
 *   fields a newer bridge adds pass through unchanged (the protocol adds fields without a
 *   version bump).
 * - Failure must be exactly `{request_id, ok:false, error:{code, message}}` with our request_id
 *   or null (the bridge answers PEER_NOT_AUTHORIZED and REQUEST_TOO_LARGE before it knows the
 *   id) and two strings. A known code becomes that AgentError with the bridge's message
 *   verbatim; any other well-formed code (a filesystem-plane code the bridge shares, or a newer
 *   bridge's) is relayed as it came (RelayedBridgeError), so clients render `CODE: message`.
 * - Anything else — not UTF-8 or JSON, a non-finite number, extra or missing keys, a non-bool
 *   `ok`, another request_id, a non-object result, a code that is not an UPPER_SNAKE word —
 *   is AGENT_BRIDGE_PROTOCOL_ERROR "Agent Bridge protocol failure".
 */
export const PROTOCOL_FAILURE = "Agent Bridge protocol failure"

const CODE = /^[A-Z][A-Z0-9_]{0,127}$/

/** AGENT_BRIDGE_PROTOCOL_ERROR "Agent Bridge protocol failure". */
export const protocolFailure = (): AgentError => new AgentBridgeProtocolError({ message: PROTOCOL_FAILURE })

const hasExactly = (value: Record<string, unknown>, keys: ReadonlyArray<string>): boolean => {
  const own = Object.keys(value)
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key))
}

const isKnownCode = (code: string): code is AgentErrorCode => Object.hasOwn(AGENT_ERRORS, code)

export const decodeResponse = (
  line: Uint8Array,
  requestId: string,
  resultSchema: Schema.Schema.AnyNoContext
): Either.Either<unknown, BridgeCallError> => {
  const parsed = parseJsonLine(line)
  if (!parsed.ok || !isPlainObject(parsed.value)) return Either.left(protocolFailure())
  const response = parsed.value
  if (typeof response.ok !== "boolean") return Either.left(protocolFailure())

  if (response.ok) {
    if (!hasExactly(response, ["request_id", "ok", "result"]) || response.request_id !== requestId) {
      return Either.left(protocolFailure())
    }
    if (!isPlainObject(response.result)) return Either.left(protocolFailure())
    return Schema.decodeUnknownEither(resultSchema, { onExcessProperty: "preserve" })(response.result).pipe(
      Either.mapLeft(protocolFailure)
    )
  }

  if (!hasExactly(response, ["request_id", "ok", "error"])) return Either.left(protocolFailure())
  if (response.request_id !== requestId && response.request_id !== null) return Either.left(protocolFailure())
  const error = response.error
  if (!isPlainObject(error) || !hasExactly(error, ["code", "message"])) return Either.left(protocolFailure())
  const { code, message } = error
  if (typeof code !== "string" || typeof message !== "string" || !CODE.test(code)) {
    return Either.left(protocolFailure())
  }
  return Either.left(
    isKnownCode(code) ? agentError(code, message) : new RelayedBridgeError({ code, message })
  )
}
