import {
  AgentBridgeProtocolError,
  type AgentBridgeUnavailable,
  BRIDGE_CONTRACT,
  type BridgeMethod,
  type EnvelopeError,
  EnvelopeErrors,
  errorFromWire,
  type MethodError,
  type MethodResult,
  RelayedBridgeError,
  WireError
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
 *   id) and two strings. The frozen-error registry rebuilds the error's own class — an agent
 *   code or a filesystem code the bridge shares (WORKDIR_BUSY, ...) — when it is one the method
 *   or the envelope may fail with; any other well-formed code (a newer bridge's, or one outside
 *   the contract) is relayed as it came (RelayedBridgeError). Either way the message is the
 *   bridge's, verbatim, so clients render `CODE: message`.
 * - Anything else — not UTF-8 or JSON, a non-finite number, extra or missing keys, a non-bool
 *   `ok`, another request_id, a non-object result, a code that is not an UPPER_SNAKE word —
 *   is AGENT_BRIDGE_PROTOCOL_ERROR "Agent Bridge protocol failure".
 */
export const PROTOCOL_FAILURE = "Agent Bridge protocol failure"

/** What a call of `M` can fail with on the client side. */
export type CallError<M extends BridgeMethod> =
  | MethodError<M>
  | EnvelopeError
  | AgentBridgeUnavailable
  | AgentBridgeProtocolError
  | RelayedBridgeError

const Code = Schema.String.pipe(Schema.pattern(/^[A-Z][A-Z0-9_]{0,127}$/))

const Response = Schema.Union(
  Schema.Struct({
    request_id: Schema.String,
    ok: Schema.Literal(true),
    result: Schema.Unknown
  }),
  Schema.Struct({
    request_id: Schema.NullOr(Schema.String),
    ok: Schema.Literal(false),
    error: Schema.Struct({ ...WireError.fields, code: Code })
  })
)
const decodeEnvelope = Schema.decodeUnknownEither(Response, { onExcessProperty: "error" })

/** AGENT_BRIDGE_PROTOCOL_ERROR "Agent Bridge protocol failure". */
export const protocolFailure = (): AgentBridgeProtocolError =>
  new AgentBridgeProtocolError({ message: PROTOCOL_FAILURE })

/** The class the registry rebuilds, if the method or the envelope may fail with it. */
const expectedError = <M extends BridgeMethod>(
  method: M,
  wire: WireError
): MethodError<M> | EnvelopeError | RelayedBridgeError => {
  const error = errorFromWire(wire)
  if (BRIDGE_CONTRACT[method].errors.has(error)) return error
  if (EnvelopeErrors.has(error)) return error
  return new RelayedBridgeError(wire)
}

export const decodeResponse = <M extends BridgeMethod>(
  line: Uint8Array,
  requestId: string,
  method: M
): Either.Either<MethodResult<M>, CallError<M>> => {
  const parsed = parseJsonLine(line)
  if (!parsed.ok) return Either.left(protocolFailure())
  const envelope = decodeEnvelope(parsed.value)
  if (Either.isLeft(envelope)) return Either.left(protocolFailure())
  const response = envelope.right
  if (!response.ok) {
    if (response.request_id !== requestId && response.request_id !== null)
      return Either.left(protocolFailure())
    return Either.left(expectedError(method, response.error))
  }
  if (response.request_id !== requestId || !isPlainObject(response.result))
    return Either.left(protocolFailure())
  return Schema.decodeUnknownEither(BRIDGE_CONTRACT[method].result, { onExcessProperty: "preserve" })(
    response.result
  ).pipe(Either.mapLeft(protocolFailure))
}
