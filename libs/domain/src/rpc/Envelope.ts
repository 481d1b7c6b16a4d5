import { Schema } from "effect"
import { AgentErrorBody } from "../agent/AgentErrors.js"

/**
 * NDJSON RPC v1 between serverfs-mcp (and the CLI) and serverfs-bridge (bridge-internals §1.4):
 * one request line `{protocol_version, request_id, method, params}`, one response line
 * `{request_id, ok, result}` or `{request_id|null, ok:false, error:{code, message}}`. Frames are
 * at most 1 MiB each way, enforced before parsing.
 */
export const PROTOCOL_VERSION = 1
export const MAX_FRAME_BYTES = 1_048_576

export const RequestEnvelope = Schema.Struct({
  protocol_version: Schema.Number,
  request_id: Schema.String.pipe(Schema.minLength(1)),
  method: Schema.String.pipe(Schema.minLength(1)),
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type RequestEnvelope = typeof RequestEnvelope.Type

export const SuccessEnvelope = Schema.Struct({
  request_id: Schema.String,
  ok: Schema.Literal(true),
  result: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const FailureEnvelope = Schema.Struct({
  request_id: Schema.NullOr(Schema.String),
  ok: Schema.Literal(false),
  error: AgentErrorBody
})

export const ResponseEnvelope = Schema.Union(SuccessEnvelope, FailureEnvelope)
export type ResponseEnvelope = typeof ResponseEnvelope.Type
