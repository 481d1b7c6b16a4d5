import { Schema } from "effect"

/**
 * A runtime's model catalog as the bridge returns it (tool-contracts §8 list_agent_models,
 * bridge-internals §7/§8): each provider's own list, normalized to one shape. Everything in it
 * comes from a provider process the bridge does not trust, so every list and every string is
 * bounded here, once, whatever the adapter did: a hostile runtime cannot make the bridge hold or
 * return more than `MAX_MODELS` entries of bounded size.
 */

/** The most models one catalog carries (bridge-internals §7: "capped at 64"). */
export const MAX_MODELS = 64
/** An id or a display name, in UTF-8 bytes (the model id limit of bridge-internals §3). */
export const MAX_MODEL_NAME_BYTES = 512
/** A description, in UTF-8 bytes (bridge-internals §7: "description(≤2048)"). */
export const MAX_MODEL_DESCRIPTION_BYTES = 2048
/** The most input modalities, reasoning efforts or service tiers one model lists. */
export const MAX_MODEL_LIST_ITEMS = 16
/** One item of those lists (a modality, an effort, a tier id), in UTF-8 bytes. */
export const MAX_MODEL_ITEM_BYTES = 64

export const ModelStatus = Schema.Literal("ok", "unsupported", "unavailable")
export type ModelStatus = typeof ModelStatus.Type

/** Whose list it is: the runtime's own catalog, or what the signed-in account may use. */
export const ModelScope = Schema.Literal("runtime_catalog", "current_account", "none")
export type ModelScope = typeof ModelScope.Type

/** What list_agent_runtimes says about a runtime's discovery (bridge-internals §7). */
export const ModelDiscovery = Schema.Literal("runtime_catalog", "current_account", "unsupported")
export type ModelDiscovery = typeof ModelDiscovery.Type

export const ModelReasoning = Schema.Struct({
  supported: Schema.Array(Schema.String),
  default: Schema.NullOr(Schema.String)
})

export const ModelEntry = Schema.Struct({
  id: Schema.String,
  display_name: Schema.String,
  description: Schema.optional(Schema.String),
  enabled: Schema.Boolean,
  /** null: the provider does not say. */
  is_default: Schema.NullOr(Schema.Boolean),
  hidden: Schema.NullOr(Schema.Boolean),
  input_modalities: Schema.optional(Schema.Array(Schema.String)),
  reasoning: Schema.optional(ModelReasoning),
  context: Schema.optional(Schema.Struct({ window: Schema.NullOr(Schema.Number) })),
  service_tiers: Schema.optional(Schema.Array(Schema.String)),
  is_free: Schema.optional(Schema.Boolean),
  price_factor: Schema.optional(Schema.Number),
  is_new: Schema.optional(Schema.Boolean)
})
export type ModelEntry = typeof ModelEntry.Type

export const ModelCatalog = Schema.Struct({
  status: ModelStatus,
  scope: ModelScope,
  source: Schema.String,
  models: Schema.Array(ModelEntry),
  detail: Schema.optional(Schema.String)
})
export type ModelCatalog = typeof ModelCatalog.Type

/** Advice mode's answer (no advisor here: always `disabled` or `not_applicable`, deviation 41). */
export const ModelAdvice = Schema.Struct({
  status: Schema.Literal("completed", "disabled", "unavailable", "not_applicable"),
  automatic: Schema.Literal(false),
  recommended_model: Schema.optional(Schema.String),
  confidence: Schema.optional(Schema.Number),
  probabilities: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number })),
  advisor_model: Schema.optional(Schema.String)
})
export type ModelAdvice = typeof ModelAdvice.Type

/** runtime.models' result: the catalog under the runtime's name, plus the advice in advice mode. */
export const RuntimeModelsResult = Schema.Struct({
  runtime: Schema.String,
  ...ModelCatalog.fields,
  model_advice: Schema.optional(ModelAdvice)
})
export type RuntimeModelsResult = typeof RuntimeModelsResult.Type

// ---- bounding ----------------------------------------------------------------------------------

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8")

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that ends on a whole character. */
export const boundedText = (text: string, maxBytes: number): string => {
  // A string of n UTF-16 units is at most 3n bytes: short ones need no encoding.
  if (text.length * 3 <= maxBytes) return text
  // Never encode more than could survive: a huge hostile string costs O(maxBytes) here.
  let head = text.slice(0, maxBytes)
  // A cut between the halves of a surrogate pair would encode a replacement character.
  const last = head.charCodeAt(head.length - 1)
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1)
  const bytes = encoder.encode(head)
  if (bytes.length <= maxBytes) return decoder.decode(bytes)
  let cut = maxBytes
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--
  return decoder.decode(bytes.subarray(0, cut))
}

/** Is `text` at most `maxBytes` UTF-8 bytes? (Without encoding a string that cannot fit.) */
export const fitsUtf8Bytes = (text: string, maxBytes: number): boolean => {
  if (text.length > maxBytes) return false
  if (text.length * 3 <= maxBytes) return true
  return encoder.encode(text).length <= maxBytes
}

const boundedList = (items: ReadonlyArray<string>): ReadonlyArray<string> =>
  items.slice(0, MAX_MODEL_LIST_ITEMS).map((item) => boundedText(item, MAX_MODEL_ITEM_BYTES))

const finiteOrNull = (n: number | null): number | null => (n !== null && Number.isFinite(n) ? n : null)

/** One entry with every string and list bounded. */
export const boundedModel = (model: ModelEntry): ModelEntry => ({
  id: boundedText(model.id, MAX_MODEL_NAME_BYTES),
  display_name: boundedText(model.display_name, MAX_MODEL_NAME_BYTES),
  ...(model.description === undefined
    ? {}
    : { description: boundedText(model.description, MAX_MODEL_DESCRIPTION_BYTES) }),
  enabled: model.enabled,
  is_default: model.is_default,
  hidden: model.hidden,
  ...(model.input_modalities === undefined ? {} : { input_modalities: boundedList(model.input_modalities) }),
  ...(model.reasoning === undefined
    ? {}
    : {
        reasoning: {
          supported: boundedList(model.reasoning.supported),
          default:
            model.reasoning.default === null
              ? null
              : boundedText(model.reasoning.default, MAX_MODEL_ITEM_BYTES)
        }
      }),
  ...(model.context === undefined ? {} : { context: { window: finiteOrNull(model.context.window) } }),
  ...(model.service_tiers === undefined ? {} : { service_tiers: boundedList(model.service_tiers) }),
  ...(model.is_free === undefined ? {} : { is_free: model.is_free }),
  ...(model.price_factor === undefined || !Number.isFinite(model.price_factor)
    ? {}
    : { price_factor: model.price_factor }),
  ...(model.is_new === undefined ? {} : { is_new: model.is_new })
})

/** The catalog with at most `MAX_MODELS` bounded entries and a bounded source and detail. */
export const boundedCatalog = (catalog: ModelCatalog): ModelCatalog => ({
  status: catalog.status,
  scope: catalog.scope,
  source: boundedText(catalog.source, MAX_MODEL_ITEM_BYTES),
  models: catalog.models.slice(0, MAX_MODELS).map(boundedModel),
  ...(catalog.detail === undefined
    ? {}
    : { detail: boundedText(catalog.detail, MAX_MODEL_DESCRIPTION_BYTES) })
})
