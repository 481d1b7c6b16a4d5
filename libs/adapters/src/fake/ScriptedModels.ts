import { Effect } from "effect"
import type { ModelDiscoveryFailed, ModelListing } from "../ProviderAdapter.js"

/**
 * The scripted runtime's model list: fixed, for the tests (bridge-internals §7 "fake"). Two
 * models, one of them the default and one hidden, so a test sees both flags; a submit naming
 * either is accepted, any other name refused.
 */
export const SCRIPTED_MODELS: ModelListing = {
  catalog: {
    status: "ok",
    scope: "runtime_catalog",
    source: "scripted",
    models: [
      {
        id: "scripted-large",
        display_name: "Scripted Large",
        description: "The scripted runtime's default model (tests only).",
        enabled: true,
        is_default: true,
        hidden: false,
        input_modalities: ["text"],
        reasoning: { supported: ["low", "medium", "high"], default: "medium" },
        context: { window: 200000 }
      },
      {
        id: "scripted-small",
        display_name: "Scripted Small",
        enabled: true,
        is_default: false,
        hidden: true
      }
    ]
  },
  accepted: new Set(["scripted-large", "scripted-small"])
}

export const listScriptedModels = (): Effect.Effect<ModelListing, ModelDiscoveryFailed> =>
  Effect.succeed(SCRIPTED_MODELS)
