/**
 * The framed protocol between the MCP process and its file-ingress fetcher process. Both sides
 * bound every frame, so neither can make the other buffer without limit.
 *
 * Parent → child: one request frame, a 4-byte big-endian length then that many bytes of JSON
 * (at most MAX_REQUEST_BYTES), after which the parent closes the child's stdin.
 * Child → parent: frames of one type byte, a 4-byte big-endian length and the payload:
 * READY (empty, written before anything else), DATA (body bytes, at most MAX_DATA_FRAME),
 * DONE (empty) or ERROR (an error code in ASCII, at most 64 bytes).
 */
export const FRAME_READY = 0
export const FRAME_DATA = 1
export const FRAME_DONE = 2
export const FRAME_ERROR = 3

export const MAX_REQUEST_BYTES = 65536
export const MAX_DATA_FRAME = 65536
export const MAX_URL_LENGTH = 8192

/** Codes the fetcher may report; anything else is read as FILE_INGRESS_FAILED. */
export const FETCH_CODES = [
  "FILE_INGRESS_FAILED",
  "URL_NOT_ALLOWED",
  "HOST_NOT_ALLOWED",
  "ADDRESS_NOT_ALLOWED",
  "DNS_FAILED",
  "TOO_MANY_REDIRECTS",
  "UPSTREAM_FAILED",
  "BINARY_PAYLOAD_TOO_LARGE"
] as const
export type FetchCode = (typeof FETCH_CODES)[number]

/**
 * Test-only allowance. Production builds the request from GlobalSettings and never sets it; it
 * reaches the fetcher only when a test constructs the layer with it (never from a variable).
 * It adds a CA, one port, exact addresses that count as public (the loopback test server) and
 * optionally fixed DNS answers, served in order per host (the last one repeats).
 */
export interface IngressTestAllowance {
  readonly caPem: string
  readonly port: number
  readonly publicAddresses: ReadonlyArray<string>
  readonly dnsAnswers?: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string>>>> | undefined
}

export interface FetchRequest {
  readonly url: string
  readonly maxBytes: number
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowOpenaiBlobHosts: boolean
  readonly maxRedirects: number
  readonly fetchTimeoutMs: number
  readonly test?: IngressTestAllowance | undefined
}

export const frame = (type: number, payload: Uint8Array): Buffer => {
  const header = Buffer.alloc(5)
  header.writeUInt8(type, 0)
  header.writeUInt32BE(payload.length, 1)
  return Buffer.concat([header, payload])
}
