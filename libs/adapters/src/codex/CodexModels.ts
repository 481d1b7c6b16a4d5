import {
  boundedModel,
  fitsUtf8Bytes,
  MAX_MODEL_NAME_BYTES,
  MAX_MODELS,
  type ModelEntry
} from "@serverfs/domain"
import { Effect, Either, Schema } from "effect"
import { ModelDiscoveryFailed, type ModelListing } from "../ProviderAdapter.js"
import type { CodexCli } from "./CodexCli.js"

/**
 * Codex's model list (bridge-internals §7 "Model discovery"): `model/list` {limit:64,
 * includeHidden:true, cursor} on a connection of its own, page after page until Codex says there
 * is no more, at most `MAX_MODELS` models and `MAX_PAGES` pages — a daemon that keeps answering
 * with cursors cannot keep the bridge listing. It never starts the daemon (like the probe) and
 * never starts a thread or a turn: no inference request is made.
 *
 * Scope `runtime_catalog`: the list is Codex's own model catalog (bundled with the CLI, refreshed
 * by Codex itself for a ChatGPT sign-in), the same for every thread of this CODEX_HOME; it says
 * what Codex offers, not what the account or a custom model provider will accept. Each item is
 * decoded on its own: one Codex does not describe as expected is left out, not fatal.
 */
const PAGE = 64
const MAX_PAGES = 8

const Str = Schema.String
const CodexModel = Schema.Struct({
  model: Str,
  displayName: Str,
  description: Schema.optional(Schema.NullOr(Str)),
  hidden: Schema.optional(Schema.NullOr(Schema.Boolean)),
  isDefault: Schema.optional(Schema.NullOr(Schema.Boolean)),
  inputModalities: Schema.optional(Schema.NullOr(Schema.Array(Str))),
  supportedReasoningEfforts: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ reasoningEffort: Str })))
  ),
  defaultReasoningEffort: Schema.optional(Schema.NullOr(Str)),
  serviceTiers: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ id: Str }))))
})
type CodexModel = typeof CodexModel.Type
const decodeModel = Schema.decodeUnknownEither(CodexModel)

/** A page as far as the listing reads it; the items are decoded one by one. */
const Page = Schema.Struct({
  data: Schema.Array(Schema.Unknown),
  nextCursor: Schema.optional(Schema.NullOr(Str))
})
const decodePage = Schema.decodeUnknownEither(Page)

/** Codex's item → the normalized entry (bounded again by the bridge). */
export const toModelEntry = (m: CodexModel): ModelEntry =>
  boundedModel({
    id: m.model,
    display_name: m.displayName,
    ...(m.description === undefined || m.description === null ? {} : { description: m.description }),
    enabled: true,
    is_default: m.isDefault ?? null,
    hidden: m.hidden ?? null,
    ...(m.inputModalities === undefined || m.inputModalities === null
      ? {}
      : { input_modalities: m.inputModalities }),
    ...(m.supportedReasoningEfforts === undefined || m.supportedReasoningEfforts === null
      ? {}
      : {
          reasoning: {
            supported: m.supportedReasoningEfforts.map((e) => e.reasoningEffort),
            default: m.defaultReasoningEffort ?? null
          }
        }),
    ...(m.serviceTiers === undefined || m.serviceTiers === null
      ? {}
      : { service_tiers: m.serviceTiers.map((t) => t.id) })
  })

const failed = (reason: string) => new ModelDiscoveryFailed({ reason })

export const makeCodexListModels = (cli: CodexCli) => (): Effect.Effect<ModelListing, ModelDiscoveryFailed> =>
  Effect.scoped(
    Effect.gen(function* () {
      const connection = yield* cli.connect.pipe(Effect.mapError((e) => failed(e.reason)))
      const models: Array<ModelEntry> = []
      let cursor: string | null = null
      for (let page = 0; page < MAX_PAGES && models.length < MAX_MODELS; page++) {
        const answer: unknown = yield* connection
          .request("model/list", { limit: PAGE, includeHidden: true, cursor })
          .pipe(Effect.mapError(() => failed("Codex did not answer model/list")))
        const decoded = decodePage(answer)
        if (Either.isLeft(decoded)) return yield* failed("Codex answered model/list with an unreadable page")
        for (const item of decoded.right.data.slice(0, MAX_MODELS - models.length)) {
          const model = decodeModel(item)
          // A model id Codex could never be given back (too long) is not offered either.
          if (Either.isRight(model) && fitsUtf8Bytes(model.right.model, MAX_MODEL_NAME_BYTES)) {
            models.push(toModelEntry(model.right))
          }
        }
        cursor = decoded.right.nextCursor ?? null
        if (cursor === null) break
      }
      return {
        catalog: { status: "ok", scope: "runtime_catalog", source: "codex_app_server", models },
        accepted: new Set(models.map((m) => m.id))
      } satisfies ModelListing
    })
  )
