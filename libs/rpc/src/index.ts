export {
  BridgeClient,
  type BridgeClientOptions,
  type BridgeClientService,
  makeBridgeClient,
  UNAVAILABLE
} from "./BridgeClient.js"
export {
  answer,
  type BridgeHandlers,
  handlerOf,
  type RpcHandler,
  withinContract
} from "./Dispatch.js"
export {
  type Frame,
  LineBuffer
} from "./LineBuffer.js"
export {
  type AllowedPeer,
  isPeerAllowed,
  readPeerCred,
  resolveAllowedPeer
} from "./PeerCheck.js"
export {
  type DecodedRequest,
  decodeRequest
} from "./RequestDecoder.js"
export {
  MCP_REQUEST_ID_PATTERN,
  newRequestId
} from "./RequestId.js"
export {
  type CallError,
  decodeResponse,
  PROTOCOL_FAILURE,
  protocolFailure
} from "./ResponseDecoder.js"
export {
  BRIDGE_FAULT_MESSAGE,
  bridgeFault,
  errorFrame,
  successFrame
} from "./ResponseFrame.js"
export {
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  DEFAULT_MAX_CONNECTIONS,
  type RpcServerOptions,
  serveRpc
} from "./RpcServer.js"
export { socketName } from "./SocketPath.js"
export {
  isPlainObject,
  type ParsedJson,
  parseJsonLine,
  stringifyJson
} from "./StrictJson.js"
