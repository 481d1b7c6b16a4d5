import { isUtf8 } from "node:buffer"
import * as fs from "node:fs"
import {
  BinaryContentNotAllowed,
  BinaryFile,
  type CreateTextFileInput,
  EditConflict,
  type EditTextFileInput,
  type EditTextFileOutput,
  FileChangedDuringRead,
  type MutationError,
  TooManyEdits,
  UnsupportedTextEncoding,
  WriteTooLarge
} from "@serverfs/domain"
import type { ResolvedPath } from "@serverfs/policy"
import { fstat } from "@serverfs/posix"
import { Effect } from "effect"
import { revisionOf } from "../Revision.js"
import { createTextFile } from "./createTextFile.js"
import { applyEdit, type EditOutcome, type PlannedEdit } from "./EditPlan.js"
import { authorize, type MutationContext } from "./MutationContext.js"
import { toMutationError } from "./MutationOsError.js"
import { openReplaceTarget, replaceFile } from "./Publication.js"
import { isStorableText, UTF8_BOM, utf8Length } from "./TextContent.js"

/** Read the whole file through its fd (the size was checked against the write limit first). */
const readWhole = (fd: number, size: number): Buffer => {
  const buffer = Buffer.allocUnsafe(size + 1)
  let filled = 0
  for (;;) {
    if (filled === buffer.length) return buffer // grew past its stat size: the revision check catches it
    const n = fs.readSync(fd, buffer, filled, buffer.length - filled, filled)
    if (n === 0) return buffer.subarray(0, filled)
    filled += n
  }
}

/** How the whole text (BOM set aside) becomes the new one, every step within `limit` bytes. */
type Rewrite = (text: Uint8Array, limit: number) => Effect.Effect<EditOutcome>

/** Let pending I/O and other calls run (setImmediate runs right after the poll phase). */
const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * The edits one step at a time, yielding to the event loop between steps: one step is bounded
 * (linear in max_write_bytes), a whole call is up to SERVERFS_MAX_EDITS_PER_CALL of them, and the
 * server answers other calls in between instead of after all of them.
 */
const applyEditsYielding = (
  text: Uint8Array,
  edits: ReadonlyArray<PlannedEdit>,
  limit: number
): Effect.Effect<EditOutcome> =>
  Effect.gen(function* () {
    let current = text
    for (const [index, edit] of edits.entries()) {
      if (index > 0) yield* yieldToEventLoop
      const step = applyEdit(current, edit, index, edits.length, limit)
      if (step._tag !== "applied") return step
      current = step.bytes
    }
    return { _tag: "applied", bytes: current } as const
  })

/**
 * The edit transaction (tool-contracts §2.8, from "File checks" on): open the regular file,
 * compare its revision (`expectedRevision`; `undefined` takes the one found, for a whole-file
 * replacement), refuse hard links and oversized files (openReplaceTarget), read, validate,
 * rewrite in memory and publish by replacing the file atomically (replaceFile: metadata kept,
 * revision checked again at the last moment). CRLF, a missing final newline and every untouched byte are kept; a BOM is hidden
 * from matching and written back.
 */
const rewriteTextFile = (
  context: MutationContext,
  resolved: ResolvedPath,
  at: { readonly workdir: string; readonly path: string },
  expectedRevision: string | undefined,
  rewrite: Rewrite
) => {
  const maxBytes = resolved.workdir.maxWriteBytes
  return context.guard(
    resolved.workdir,
    Effect.scoped(
      Effect.gen(function* () {
        const target = yield* openReplaceTarget(context, resolved, at, expectedRevision)
        const { original, revisionBefore } = target
        if (original.stat.size > maxBytes) return yield* new WriteTooLarge({ ...at, maxBytes })
        const bytes = yield* Effect.try({
          try: () => readWhole(original.fd, original.stat.size),
          catch: (e) => toMutationError(e, at)
        })
        const after = yield* Effect.try({
          try: () => fstat(original.fd),
          catch: (e) => toMutationError(e, at)
        })
        if (revisionOf(after) !== revisionBefore) return yield* new FileChangedDuringRead(at)
        if (bytes.includes(0)) return yield* new BinaryFile(at)
        const hasBom = bytes.subarray(0, 3).equals(UTF8_BOM)
        const text = hasBom ? bytes.subarray(3) : bytes
        // Validated, not decoded: the edits are matched on the UTF-8 bytes (EditPlan.ts).
        if (!isUtf8(text)) return yield* new UnsupportedTextEncoding(at)

        // Every step of the plan, the BOM included, stays within max_write_bytes: a step that
        // would exceed it is refused before it is built (so a later edit's conflict is not
        // reached — the text it would be matched in is never made).
        const outcome = yield* rewrite(text, maxBytes - (hasBom ? UTF8_BOM.length : 0))
        if (outcome._tag === "conflict") return yield* new EditConflict({ ...at, detail: outcome.detail })
        if (outcome._tag === "tooLarge") return yield* new WriteTooLarge({ ...at, maxBytes })
        const result = hasBom ? Buffer.concat([UTF8_BOM, outcome.bytes]) : outcome.bytes

        const revision = yield* replaceFile(context, target, result, at)
        return { bytesBefore: bytes.length, bytesAfter: result.length, revisionBefore, revision }
      })
    )
  )
}

/**
 * edit_text_file (tool-contracts §2.8, spec v0.2 §3/§6). Edits are validated before the file is
 * touched, then applied in memory all or nothing by the edit transaction.
 */
export const editTextFile = (
  context: MutationContext,
  input: EditTextFileInput
): Effect.Effect<EditTextFileOutput, MutationError> =>
  Effect.gen(function* () {
    const resolved = yield* authorize(context, input.workdir, input.path)
    const at = { workdir: input.workdir, path: input.path }
    const maxBytes = resolved.workdir.maxWriteBytes
    const { edits } = input
    if (edits.length === 0) return yield* new EditConflict({ ...at, detail: "no edits given" })
    if (edits.length > context.settings.maxEditsPerCall) {
      return yield* new TooManyEdits({ ...at, count: edits.length, max: context.settings.maxEditsPerCall })
    }
    if (edits.some((e) => !isStorableText(e.old_text) || !isStorableText(e.new_text))) {
      return yield* new BinaryContentNotAllowed(at)
    }
    const editBytes = edits.reduce((sum, e) => sum + utf8Length(e.old_text) + utf8Length(e.new_text), 0)
    if (editBytes > maxBytes) return yield* new WriteTooLarge({ ...at, maxBytes })

    const done = yield* rewriteTextFile(context, resolved, at, input.expected_revision, (text, limit) =>
      applyEditsYielding(text, edits, limit)
    )
    return {
      workdir: input.workdir,
      path: input.path,
      edited: true as const,
      edits_applied: edits.length,
      bytes_before: done.bytesBefore,
      bytes_after: done.bytesAfter,
      revision_before: done.revisionBefore,
      revision: done.revision
    }
  })

/**
 * Create a text file, or replace the whole text of an existing one: not an MCP tool, but the
 * scripted runtime's `write:` (through the bridge, as the lease holder). A free name is
 * create_text_file; a taken one is the edit transaction with the whole text as the single
 * edit. So every check of both tools applies — policy, read-only, parent, symlinks, content,
 * size, and for an existing file: a regular file, one link only, text, valid UTF-8 (its BOM is
 * kept), metadata kept, atomic replacement.
 */
export const writeTextFile = (
  context: MutationContext,
  input: CreateTextFileInput
): Effect.Effect<{ readonly created: boolean; readonly revision: string }, MutationError> =>
  createTextFile(context, input).pipe(
    Effect.map((created) => ({ created: true, revision: created.revision })),
    Effect.catchTag("PATH_ALREADY_EXISTS", () =>
      Effect.gen(function* () {
        // The content passed create_text_file's checks (they come before the existence check).
        const resolved = yield* authorize(context, input.workdir, input.path)
        const content = Buffer.from(input.content, "utf8")
        const done = yield* rewriteTextFile(
          context,
          resolved,
          { workdir: input.workdir, path: input.path },
          undefined,
          (_text, limit) =>
            Effect.succeed<EditOutcome>(
              content.length > limit ? { _tag: "tooLarge", edit: 1 } : { _tag: "applied", bytes: content }
            )
        )
        return { created: false, revision: done.revision }
      })
    )
  )
