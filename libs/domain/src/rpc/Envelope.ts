import {
  BridgeClosed,
  BridgeProtocolError,
  InvalidRequest,
  MethodNotFound,
  PeerNotAuthorized,
  ProtocolVersionUnsupported,
  RequestTooLarge,
  ResponseTooLarge
} from "../agent/AgentErrors.js"
import { type ErrorOf, errorSet } from "./ErrorSet.js"

/**
 * NDJSON RPC v1 between serverfs-mcp (and the CLI) and serverfs-bridge (bridge-internals §1.4):
 * one request line `{protocol_version, request_id, method, params}`, one response line
 * `{request_id, ok, result}` or `{request_id|null, ok:false, error:{code, message}}`. Frames are
 * at most 1 MiB each way, enforced before parsing.
 */
export const PROTOCOL_VERSION = 1
export const MAX_FRAME_BYTES = 1_048_576

/**
 * What the RPC layer itself answers, whatever the method (docs/rpc.md, envelope-level codes):
 * no handler ran, or the handler's outcome could not be sent. BRIDGE_PROTOCOL_ERROR is also the
 * answer to a handler's defect (its details stay in the bridge's log).
 */
export const EnvelopeErrors = errorSet(
  PeerNotAuthorized,
  RequestTooLarge,
  BridgeClosed,
  InvalidRequest,
  ProtocolVersionUnsupported,
  MethodNotFound,
  BridgeProtocolError,
  ResponseTooLarge
)
export type EnvelopeError = ErrorOf<typeof EnvelopeErrors>
