import {
  DownloadBinaryFileInput,
  DownloadBinaryFileOutput,
  UploadBinaryFileInput,
  UploadBinaryFileOutput
} from "@serverfs/domain"
import type { Workdir } from "@serverfs/policy"
import type { BinaryTransfer, DownloadedFile } from "@serverfs/workspace"
import { type AnyTool, defineTool, READ_ANNOTATIONS, type ToolAnnotations } from "../ToolDefinition.js"

/** tool-contracts §1: registered iff at least one enabled workdir has binary transfer on. */
export const binaryToolsEnabled = (workdirs: ReadonlyArray<Workdir>): boolean =>
  workdirs.some((w) => w.binaryTransferEnabled)

/** tool-contracts §1: upload_binary_file carries create_text_file's annotations. */
const UPLOAD: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false
}

/** `serverfs://<workdir>/<path>`, each segment percent-encoded, "/" kept (tool-contracts §2.12). */
export const binaryUri = (workdir: string, path: string): string =>
  `serverfs://${encodeURIComponent(workdir)}/${path.split("/").map(encodeURIComponent).join("/")}`

/**
 * The download's result: exactly one EmbeddedResource holding the blob, and the metadata as
 * structuredContent. Measured for what it sends — the blob once (base64 needs no JSON escaping)
 * plus the metadata counted twice like every other result — so the response budget
 * (SERVERFS_MAX_RESPONSE_BYTES) bounds the real message, not twice the blob.
 */
const renderDownload = (downloaded: DownloadedFile) => {
  const { metadata } = downloaded
  const blob = downloaded.bytes.toString("base64")
  const uri = binaryUri(metadata.workdir, metadata.path)
  return {
    content: [{ type: "resource", resource: { uri, mimeType: metadata.mime_type, blob } }],
    structuredContent: { ...metadata },
    bytes: blob.length + 2 * Buffer.byteLength(uri) + 2 * Buffer.byteLength(JSON.stringify(metadata))
  }
}

export const binaryTools = (binary: BinaryTransfer): ReadonlyArray<AnyTool> => [
  defineTool({
    name: "download_binary_file",
    title: "Download a binary file",
    description:
      "Read a whole file of a workdir with binary transfer enabled (list_workdirs shows binary_transfer) as one embedded base64 resource, with its size, MIME type, SHA-256 and revision. For text files read_text_file is cheaper.",
    annotations: READ_ANNOTATIONS,
    input: DownloadBinaryFileInput,
    output: DownloadBinaryFileOutput,
    run: (input) => binary.downloadBinaryFile(input),
    render: renderDownload,
    audit: (_input, output: DownloadedFile) => ({
      bytes_returned: output.metadata.size,
      mime_type: output.metadata.mime_type,
      revision: output.metadata.revision
    }),
    unexpected: "READ_FAILED"
  }),
  defineTool({
    name: "upload_binary_file",
    title: "Upload a binary file",
    description: binary.fileIngressEnabled
      ? "Write a whole file to a read-write workdir with binary transfer enabled, from data_base64 (strict base64) or a file attached in the chat (file). Without overwrite the file must not exist; overwrite=true replaces it atomically and needs expected_revision from stat_file. Returns the SHA-256 and the new revision."
      : "Write a whole file to a read-write workdir with binary transfer enabled, from data_base64 (strict base64). Without overwrite the file must not exist; overwrite=true replaces it atomically and needs expected_revision from stat_file. Returns the SHA-256 and the new revision.",
    annotations: UPLOAD,
    input: UploadBinaryFileInput,
    output: UploadBinaryFileOutput,
    run: (input) => binary.uploadBinaryFile(input),
    audit: (_input, output) => ({ bytes_written: output.bytes_written, revision: output.revision }),
    unexpected: "MUTATION_IO_ERROR",
    ...(binary.fileIngressEnabled ? { meta: { "openai/fileParams": ["file"] } } : {})
  })
]
