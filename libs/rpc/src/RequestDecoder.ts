import {
  BRIDGE_CONTRACT,
  type BridgeMethod,
  type DecodedParams,
  InvalidRequest,
  isBridgeMethod,
  MethodNotFound,
  PROTOCOL_VERSION,
  ProtocolVersionUnsupported,
  type RpcRequestId,
  rpcRequestId
} from "@serverfs/domain"
import { Either, ParseResult, Schema } from "effect"
import { shownName, shownText } from "./BoundedText.js"
import { isPlainObject, parseJsonLine } from "./StrictJson.js"

/**
 * The server's envelope checks for one request line (bridge-internals §1.4), as a pure
 * function: either a call to dispatch, with params already decoded by the method's schema, or
 * the envelope-level error to answer. Nothing reaches a handler unless every check passed.
 *
 * Order: UTF-8 and JSON → a JSON object → exactly the four keys → protocol_version an integer
 * (a boolean never is) and equal to 1 → request_id → method → params an object → known
 * method → params valid for that method (unknown keys refused). The request_id is echoed in
 * every rejection once it is known to be a non-empty string, even if a later check fails.
 */
export type DecodedRequest =
  | {
      readonly _tag: "Call"
      readonly requestId: RpcRequestId
      readonly method: BridgeMethod
      readonly params: DecodedParams<BridgeMethod>
    }
  | {
      readonly _tag: "Reject"
      readonly requestId: RpcRequestId | null
      readonly error: InvalidRequest | ProtocolVersionUnsupported | MethodNotFound
    }

const REQUEST_KEYS = ["protocol_version", "request_id", "method", "params"] as const

const PARSE_PROBLEMS = {
  "not UTF-8": "request is not valid UTF-8",
  "not JSON": "request is not valid JSON",
  "non-finite number": "request contains a non-finite number (NaN and Infinity are not JSON)"
} as const

const invalid = (requestId: RpcRequestId | null, message: string): DecodedRequest => ({
  _tag: "Reject",
  requestId,
  error: new InvalidRequest({ message })
})

const describePath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((segment) => (typeof segment === "number" ? `[${segment}]` : String(segment))).join(".")

/** The first schema complaint about the params, naming the field it is about. */
const describeParamsIssue = (method: BridgeMethod, issue: ParseResult.ParseIssue): string => {
  const first = ParseResult.ArrayFormatter.formatIssueSync(issue)[0]
  const prefix = `invalid params for ${method}`
  if (first === undefined) return prefix
  const field = shownName(describePath(first.path))
  if (first.path.length === 0) return `${prefix}: ${shownText(first.message)}`
  if (first._tag === "Unexpected") return `${prefix}: unknown field ${field}`
  if (first._tag === "Missing") return `${prefix}: missing field ${field}`
  return `${prefix}: field ${field}: ${shownText(first.message)}`
}

/** The params of `method`, decoded strictly by its schema (branded ids included). */
const decodeParams = <M extends BridgeMethod>(method: M, params: unknown) =>
  Schema.decodeUnknownEither(BRIDGE_CONTRACT[method].params, { onExcessProperty: "error", errors: "first" })(
    params
  )

export const decodeRequest = (line: Uint8Array): DecodedRequest => {
  const parsed = parseJsonLine(line)
  if (!parsed.ok) return invalid(null, PARSE_PROBLEMS[parsed.problem])
  const request = parsed.value
  if (!isPlainObject(request)) return invalid(null, "request must be a JSON object")

  const rawId = request.request_id
  const requestId = typeof rawId === "string" && rawId.length > 0 ? rpcRequestId(rawId) : null

  const keys = Object.keys(request)
  const extra = keys.filter((key) => !(REQUEST_KEYS as ReadonlyArray<string>).includes(key))
  if (extra.length > 0) {
    return invalid(requestId, `request has unknown key ${shownName(extra[0] ?? "")}`)
  }
  const missing = REQUEST_KEYS.filter((key) => !Object.hasOwn(request, key))
  if (missing.length > 0) return invalid(requestId, `request is missing key ${missing[0]}`)

  const version = request.protocol_version
  if (typeof version !== "number" || !Number.isInteger(version)) {
    return invalid(requestId, "protocol_version must be an integer")
  }
  if (version !== PROTOCOL_VERSION) {
    return {
      _tag: "Reject",
      requestId,
      error: new ProtocolVersionUnsupported({
        message: `protocol_version ${version} is not supported (expected ${PROTOCOL_VERSION})`
      })
    }
  }
  if (requestId === null) return invalid(null, "request_id must be a non-empty string")

  const method = request.method
  if (typeof method !== "string" || method.length === 0) {
    return invalid(requestId, "method must be a non-empty string")
  }
  if (!isPlainObject(request.params)) return invalid(requestId, "params must be a JSON object")
  if (!isBridgeMethod(method)) {
    return {
      _tag: "Reject",
      requestId,
      error: new MethodNotFound({ message: `unknown bridge method: ${shownName(method)}` })
    }
  }

  const decoded = decodeParams(method, request.params)
  if (Either.isLeft(decoded)) return invalid(requestId, describeParamsIssue(method, decoded.left.issue))
  return { _tag: "Call", requestId, method, params: decoded.right }
}
