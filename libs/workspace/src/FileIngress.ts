import { type BinaryPayloadTooLarge, type FileIngressError, FileIngressUnavailable } from "@serverfs/domain"
import { Context, Effect, Layer } from "effect"

/**
 * The port through which upload_binary_file fetches a ChatGPT `file` source
 * (`openai/fileParams`, tool-contracts §2.13). The MCP process keeps no egress of its own: the
 * implementation hands the request to a separate, minimal fetcher process. `file_name` and
 * `mime_type` are informational only; they never choose the destination.
 */
export interface IngressSource {
  readonly download_url: string
  readonly file_id: string
  readonly mime_type?: string | null | undefined
  readonly file_name?: string | null | undefined
}

export interface FileIngressRequest {
  readonly source: IngressSource
  /** The caller's destination, for error messages only. */
  readonly workdir: string
  readonly path: string
  /** The workdir's max_binary_transfer_bytes: more bytes → BINARY_PAYLOAD_TOO_LARGE. */
  readonly maxBytes: number
}

export class FileIngress extends Context.Tag("@serverfs/workspace/FileIngress")<
  FileIngress,
  {
    /** Whether SERVERFS_FILE_INGRESS_ENABLED is on (the `file` source is advertised and accepted). */
    readonly enabled: boolean
    readonly fetch: (
      request: FileIngressRequest
    ) => Effect.Effect<Uint8Array, FileIngressError | BinaryPayloadTooLarge>
  }
>() {}

/**
 * The port where ingress is disabled (SERVERFS_FILE_INGRESS_ENABLED off, the default): the
 * `file` source is not advertised and upload_binary_file refuses it with FILE_INGRESS_DISABLED
 * before ever calling fetch, which fails closed if it is reached anyway.
 */
export const FileIngressDisabledLayer = Layer.succeed(FileIngress, {
  enabled: false,
  fetch: (request) =>
    Effect.fail(new FileIngressUnavailable({ workdir: request.workdir, path: request.path }))
})
