import { createHash } from "node:crypto"
import {
  BinaryPayloadTooLarge,
  BinarySourceConflict,
  BinarySourceRequired,
  BinaryTransferDisabled,
  ExpectedRevisionNotAllowed,
  ExpectedRevisionRequired,
  FileIngressDisabled,
  type FileIngressError,
  InvalidBase64,
  type MutationError,
  RootMutationNotAllowed,
  type UploadBinaryFileInput,
  type UploadBinaryFileOutput,
  WorkdirReadOnly
} from "@serverfs/domain"
import { resolvePath } from "@serverfs/policy"
import { Effect, type Scope } from "effect"
import type { FileIngress } from "../FileIngress.js"
import { type MutationContext, openMutationParent } from "../mutations/MutationContext.js"
import { openReplaceTarget, publishNewFile, replaceFile } from "../mutations/Publication.js"
import { decodeStrictBase64, maxEncodedLength } from "./StrictBase64.js"

export type UploadError =
  | MutationError
  | BinaryTransferDisabled
  | ExpectedRevisionRequired
  | ExpectedRevisionNotAllowed
  | BinarySourceRequired
  | BinarySourceConflict
  | FileIngressDisabled
  | FileIngressError
  | InvalidBase64
  | BinaryPayloadTooLarge

interface Published {
  readonly revisionBefore: string | null
  readonly revision: string
}

/**
 * upload_binary_file (tool-contracts §2.13), in the contract's order: WORKDIR_NOT_FOUND →
 * WORKDIR_READ_ONLY → BINARY_TRANSFER_DISABLED → path policy → ROOT_MUTATION_NOT_ALLOWED →
 * argument rules → the payload (base64 or the file ingress) → mutation lock + workdir lease →
 * create (the publication of create_text_file) or replace (the edit transaction's checks and
 * atomic, metadata-preserving replacement). Nothing is written before the lease is held.
 */
export const uploadBinaryFile = (
  context: MutationContext,
  ingress: FileIngress["Type"],
  input: UploadBinaryFileInput
): Effect.Effect<UploadBinaryFileOutput, UploadError> =>
  Effect.gen(function* () {
    const at = { workdir: input.workdir, path: input.path }
    const workdir = yield* context.workdir(input.workdir)
    if (workdir.readOnly) return yield* new WorkdirReadOnly({ workdir: input.workdir })
    if (!workdir.binaryTransferEnabled) return yield* new BinaryTransferDisabled({ workdir: input.workdir })
    const resolved = yield* resolvePath(workdir, input.path)
    if (resolved.components.length === 0) return yield* new RootMutationNotAllowed(at)

    if (input.overwrite && input.expected_revision === null) return yield* new ExpectedRevisionRequired(at)
    if (!input.overwrite && input.expected_revision !== null) return yield* new ExpectedRevisionNotAllowed(at)
    if (input.data_base64 === null && input.file === null) return yield* new BinarySourceRequired(at)
    if (input.data_base64 !== null && input.file !== null) return yield* new BinarySourceConflict(at)
    if (input.file !== null && !ingress.enabled) return yield* new FileIngressDisabled(at)

    const maxBytes = workdir.maxBinaryTransferBytes
    const source = input.file
    const bytes: Uint8Array =
      source === null
        ? // data_base64 is set: neither source was refused above.
          yield* decodePayload(input.data_base64 ?? "", maxBytes, at)
        : yield* ingress.fetch({ source, workdir: input.workdir, path: input.path, maxBytes })
    // The port promises the bound; checked again because the bytes are about to be written.
    if (bytes.length > maxBytes) return yield* new BinaryPayloadTooLarge({ ...at, maxBytes })

    const expected = input.expected_revision
    const done = yield* context.guard(
      workdir,
      Effect.scoped(
        expected === null
          ? Effect.gen(function* (): Effect.fn.Return<Published, UploadError, Scope.Scope> {
              const parent = yield* openMutationParent(context, resolved, at, { parentNotFound: true })
              const revision = yield* publishNewFile(context, parent, bytes, at)
              return { revisionBefore: null, revision }
            })
          : Effect.gen(function* (): Effect.fn.Return<Published, UploadError, Scope.Scope> {
              const target = yield* openReplaceTarget(context, resolved, at, expected)
              const revision = yield* replaceFile(context, target, bytes, at)
              return { revisionBefore: target.revisionBefore, revision }
            })
      )
    )
    return {
      workdir: input.workdir,
      path: input.path,
      created: done.revisionBefore === null,
      replaced: done.revisionBefore !== null,
      bytes_written: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      revision_before: done.revisionBefore,
      revision: done.revision
    }
  })

/**
 * The encoded length is checked before anything is decoded (a 100 MB string is refused without
 * a 75 MB allocation), then the alphabet and padding, then the decoded length.
 */
const decodePayload = (
  text: string,
  maxBytes: number,
  at: { readonly workdir: string; readonly path: string }
): Effect.Effect<Buffer, InvalidBase64 | BinaryPayloadTooLarge> =>
  Effect.suspend((): Effect.Effect<Buffer, InvalidBase64 | BinaryPayloadTooLarge> => {
    if (text.length > maxEncodedLength(maxBytes))
      return Effect.fail(new BinaryPayloadTooLarge({ ...at, maxBytes }))
    const bytes = decodeStrictBase64(text)
    if (bytes === undefined) return Effect.fail(new InvalidBase64(at))
    if (bytes.length > maxBytes) return Effect.fail(new BinaryPayloadTooLarge({ ...at, maxBytes }))
    return Effect.succeed(bytes)
  })
