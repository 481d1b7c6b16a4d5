import { createHash } from "node:crypto"
import {
  BinaryFileTooLarge,
  BinaryTransferDisabled,
  type DownloadBinaryFileInput,
  type DownloadBinaryFileOutput,
  FileChangedDuringRead,
  location,
  NotAFile,
  type ReadError,
  ResponseTooLarge
} from "@serverfs/domain"
import { resolvePath } from "@serverfs/policy"
import { fstat, O } from "@serverfs/posix"
import { Effect } from "effect"
import type { ChannelContext } from "../ChannelContext.js"
import { mimeTypeOf } from "../channels/statFile.js"
import { openParent } from "../DescriptorWalk.js"
import { toWalkError } from "../OsError.js"
import { openRegularFile } from "../RegularFile.js"
import { revisionOf } from "../Revision.js"
import { readFully } from "../TextPage.js"
import { maxEncodedLength } from "./StrictBase64.js"

export type DownloadError = ReadError | BinaryTransferDisabled | BinaryFileTooLarge | ResponseTooLarge

/**
 * Room kept in the response budget for what travels besides the blob: the metadata (counted
 * twice, like every result) and the URI, each bounded by the caller's workdir and path strings.
 */
const ENVELOPE_ALLOWANCE = 16 * 1024

/** The metadata (structuredContent) and the bytes of one download. */
export interface DownloadedFile {
  readonly metadata: DownloadBinaryFileOutput
  readonly bytes: Buffer
}

/**
 * download_binary_file (tool-contracts §2.12): WORKDIR_NOT_FOUND → BINARY_TRANSFER_DISABLED →
 * path policy → the descriptor walk and a regular file, all through ONE fd. The size is checked
 * before reading (st_size) and while reading (one byte past the limit is asked for, so a file
 * that grew is caught without reading more); the revision is taken again from the fd after the
 * read and must not have moved. The reads are asynchronous (thread pool), so an 8 MiB file does
 * not hold the event loop.
 */
export const downloadBinaryFile = (
  context: ChannelContext,
  input: DownloadBinaryFileInput
): Effect.Effect<DownloadedFile, DownloadError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const at = { workdir: input.workdir, path: input.path }
      const workdir = yield* context.workdir(input.workdir)
      if (!workdir.binaryTransferEnabled) return yield* new BinaryTransferDisabled({ workdir: input.workdir })
      const resolved = yield* resolvePath(workdir, input.path)
      if (resolved.components.length === 0) return yield* new NotAFile(at)
      const parent = yield* openParent(context.rootOf(workdir), resolved.components, O.PATH, at)
      const file = yield* openRegularFile(parent.fd, parent.name, O.RDONLY, at)
      const revision = revisionOf(file.stat)
      const maxBytes = workdir.maxBinaryTransferBytes
      if (file.stat.size > maxBytes) return yield* new BinaryFileTooLarge({ ...at, maxBytes })
      // A blob that cannot fit the response budget (SERVERFS_MAX_RESPONSE_BYTES) is refused
      // before it is read and encoded; the call pipeline measures the real result again.
      const budget = context.settings.maxResponseBytes
      if (maxEncodedLength(file.stat.size) + ENVELOPE_ALLOWANCE > budget) {
        return yield* new ResponseTooLarge({
          message: `the base64 of ${location(input.workdir, input.path)} (${file.stat.size} bytes) exceeds the response budget of ${budget} bytes; the server's SERVERFS_MAX_RESPONSE_BYTES bounds downloads`
        })
      }
      const buffer = Buffer.allocUnsafe(Math.min(file.stat.size, maxBytes) + 1)
      const filled = yield* readFully(file.fd, buffer, buffer.length, 0).pipe(
        Effect.mapError((e) => toWalkError(e, at))
      )
      if (filled > maxBytes) return yield* new BinaryFileTooLarge({ ...at, maxBytes })
      const after = yield* Effect.try({ try: () => fstat(file.fd), catch: (e) => toWalkError(e, at) })
      if (revisionOf(after) !== revision || filled !== file.stat.size) {
        return yield* new FileChangedDuringRead(at)
      }
      const bytes = buffer.subarray(0, filled)
      return {
        metadata: {
          workdir: input.workdir,
          path: input.path,
          size: filled,
          mime_type: mimeTypeOf(parent.name),
          sha256: createHash("sha256").update(bytes).digest("hex"),
          revision
        },
        bytes
      }
    })
  )
