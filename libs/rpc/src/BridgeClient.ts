import {
  type AgentBridgeProtocolError,
  AgentBridgeUnavailable,
  BRIDGE_CONTRACT,
  type BridgeMethod,
  MAX_FRAME_BYTES,
  type MethodParams,
  type MethodResult,
  PROTOCOL_VERSION
} from "@serverfs/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { LineBuffer } from "./LineBuffer.js"
import { newRequestId } from "./RequestId.js"
import { type CallError, decodeResponse, protocolFailure } from "./ResponseDecoder.js"
import { stringifyJson } from "./StrictJson.js"
import { connectUnix } from "./UnixConnection.js"
import { waitTimer } from "./WaitTimer.js"

/**
 * The MCP side of the bridge RPC (bridge-internals §1.4, tool-contracts §8): one new
 * connection per call, one request line `{protocol_version:1, request_id:"mcp_<24 hex>",
 * method, params}`, one response line.
 *
 * - Params are encoded with the method's schema (unknown keys refused); a request line over
 *   1 MiB is refused locally, before connecting: AGENT_BRIDGE_PROTOCOL_ERROR.
 * - Connect errors, a reset, EOF before a whole line, or the timeout (which covers connect,
 *   write and read together): AGENT_BRIDGE_UNAVAILABLE "Agent Bridge is unavailable".
 * - A response line over 1 MiB stops the read: AGENT_BRIDGE_PROTOCOL_ERROR. Malformed
 *   responses, and how a failure comes back as its own error class: see `decodeResponse`.
 * - Interruption (the timeout included) destroys the socket.
 */
export interface BridgeClientOptions {
  readonly socketPath: string
  readonly timeoutSeconds: number
}

export interface BridgeClientService {
  readonly call: <M extends BridgeMethod>(
    method: M,
    params: MethodParams<M>
  ) => Effect.Effect<MethodResult<M>, CallError<M>>
}

export const UNAVAILABLE = "Agent Bridge is unavailable"

const unavailable = (): AgentBridgeUnavailable => new AgentBridgeUnavailable({ message: UNAVAILABLE })

type TransportError = AgentBridgeUnavailable | AgentBridgeProtocolError

/**
 * Send one request line and read one response line (without its "\n"), within `timeoutMs` from
 * the connect (a WaitTimer, cleared by the socket event that ends the exchange).
 */
const exchange = (
  socketPath: string,
  request: Uint8Array,
  timeoutMs: number
): Effect.Effect<Uint8Array, TransportError> =>
  Effect.scoped(
    Effect.flatMap(connectUnix(socketPath), (socket) =>
      Effect.async<Uint8Array, TransportError>((resume) => {
        const lines = new LineBuffer(MAX_FRAME_BYTES)
        const onConnect = (): void => {
          socket.write(request)
        }
        const onData = (chunk: Buffer): void => {
          lines.push(chunk)
          const frame = lines.take()
          if (frame === undefined) return
          cleanup()
          socket.pause()
          resume(frame._tag === "Line" ? Effect.succeed(frame.bytes) : Effect.fail(protocolFailure()))
        }
        const onGone = (): void => {
          cleanup()
          resume(Effect.fail(unavailable()))
        }
        const timer = waitTimer(timeoutMs, onGone)
        function cleanup(): void {
          clearTimeout(timer)
          socket.off("connect", onConnect)
          socket.off("data", onData)
          socket.off("end", onGone)
          socket.off("close", onGone)
          socket.off("error", onGone)
        }
        socket.on("connect", onConnect)
        socket.on("data", onData)
        socket.on("end", onGone)
        socket.on("close", onGone)
        socket.on("error", onGone)
        return Effect.sync(cleanup)
      })
    )
  )

export const makeBridgeClient = (options: BridgeClientOptions): BridgeClientService => {
  // Configuration is validated where it is read; a non-positive timeout here is a wiring bug.
  if (!(Number.isFinite(options.timeoutSeconds) && options.timeoutSeconds > 0)) {
    throw new RangeError("BridgeClient: timeoutSeconds must be a positive number")
  }
  const timeoutMs = options.timeoutSeconds * 1000
  const call = <M extends BridgeMethod>(
    method: M,
    params: MethodParams<M>
  ): Effect.Effect<MethodResult<M>, CallError<M>> =>
    Effect.gen(function* () {
      // Checked strictly by the method's schema (unknown keys refused) and put in its wire form.
      const schema = BRIDGE_CONTRACT[method].params
      const encoded = yield* Schema.decodeUnknown(schema, { onExcessProperty: "error" })(params).pipe(
        Effect.flatMap(Schema.encode(schema)),
        Effect.mapError(protocolFailure)
      )
      const requestId = newRequestId()
      const text = stringifyJson({
        protocol_version: PROTOCOL_VERSION,
        request_id: requestId,
        method,
        params: encoded
      })
      const request = text === undefined ? undefined : Buffer.from(`${text}\n`, "utf8")
      // The limit applies to the line without its "\n".
      if (request === undefined || request.length - 1 > MAX_FRAME_BYTES) {
        return yield* protocolFailure()
      }
      const line = yield* exchange(options.socketPath, request, timeoutMs)
      return yield* decodeResponse(line, requestId, method)
    })
  return { call }
}

/** The port through which the MCP server and the CLI reach the Agent Bridge. */
export class BridgeClient extends Context.Tag("@serverfs/rpc/BridgeClient")<
  BridgeClient,
  BridgeClientService
>() {
  static readonly layer = (options: BridgeClientOptions): Layer.Layer<BridgeClient> =>
    Layer.succeed(BridgeClient, makeBridgeClient(options))
}
