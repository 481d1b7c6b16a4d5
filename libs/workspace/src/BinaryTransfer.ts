import type { DownloadBinaryFileInput, UploadBinaryFileInput } from "@serverfs/domain"
import { Effect } from "effect"
import { downloadBinaryFile } from "./binary/downloadBinaryFile.js"
import { uploadBinaryFile } from "./binary/uploadBinaryFile.js"
import { FileIngress } from "./FileIngress.js"
import { Mutations } from "./Mutations.js"

/**
 * The two binary tools (tool-contracts §2.12–§2.13). Uploads run in the mutation context of
 * Mutations — the same process-wide lock and workdir lease as the text tools — and take a `file`
 * source through the FileIngress port.
 */
export class BinaryTransfer extends Effect.Service<BinaryTransfer>()("@serverfs/workspace/BinaryTransfer", {
  effect: Effect.gen(function* () {
    const { context } = yield* Mutations
    const ingress = yield* FileIngress
    return {
      /** Whether the `file` source is offered (`openai/fileParams`). */
      fileIngressEnabled: ingress.enabled,
      downloadBinaryFile: (input: DownloadBinaryFileInput) => downloadBinaryFile(context, input),
      uploadBinaryFile: (input: UploadBinaryFileInput) => uploadBinaryFile(context, ingress, input)
    } as const
  })
}) {}
