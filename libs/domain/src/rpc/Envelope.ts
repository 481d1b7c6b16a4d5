/**
 * NDJSON RPC v1 between serverfs-mcp (and the CLI) and serverfs-bridge (bridge-internals §1.4):
 * one request line `{protocol_version, request_id, method, params}`, one response line
 * `{request_id, ok, result}` or `{request_id|null, ok:false, error:{code, message}}`. Frames are
 * at most 1 MiB each way, enforced before parsing.
 */
export const PROTOCOL_VERSION = 1
export const MAX_FRAME_BYTES = 1_048_576
