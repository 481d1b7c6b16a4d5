import {
  BinaryContentNotAllowed,
  type CreateTextFileInput,
  type CreateTextFileOutput,
  type MutationError,
  WriteTooLarge
} from "@serverfs/domain"
import { Effect } from "effect"
import { authorize, type MutationContext, openMutationParent } from "./MutationContext.js"
import { publishNewFile } from "./Publication.js"
import { isStorableText } from "./TextContent.js"

/**
 * create_text_file (tool-contracts §2.7): the content checks, then the parent, then the shared
 * publication of a new file (Publication.ts: the target must not exist in any form).
 */
export const createTextFile = (
  context: MutationContext,
  input: CreateTextFileInput
): Effect.Effect<CreateTextFileOutput, MutationError> =>
  Effect.gen(function* () {
    const resolved = yield* authorize(context, input.workdir, input.path)
    const at = { workdir: input.workdir, path: input.path }
    if (!isStorableText(input.content)) return yield* new BinaryContentNotAllowed(at)
    const bytes = Buffer.from(input.content, "utf8")
    if (bytes.length > resolved.workdir.maxWriteBytes) {
      return yield* new WriteTooLarge({ ...at, maxBytes: resolved.workdir.maxWriteBytes })
    }
    return yield* context.guard(
      resolved.workdir,
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* openMutationParent(context, resolved, at, { parentNotFound: true })
          const revision = yield* publishNewFile(context, parent, bytes, at)
          return {
            workdir: input.workdir,
            path: input.path,
            created: true as const,
            bytes_written: bytes.length,
            revision
          }
        })
      )
    )
  })
