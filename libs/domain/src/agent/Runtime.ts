import { Schema } from "effect"
import { ModelDiscovery } from "./Models.js"

/** Runtime names and what a runtime can do (bridge-internals §2, spec v0.3 §20). */
export const RuntimeName = Schema.Literal("codex", "claude", "fake")
export type RuntimeName = typeof RuntimeName.Type

export const Profile = Schema.Literal("review", "workspace-write")
export type Profile = typeof Profile.Type

/** Tested recovery capability, never a marketing claim (spec v0.3 §20). */
export const InFlightRecovery = Schema.Literal("native", "session-resume", "none")
export type InFlightRecovery = typeof InFlightRecovery.Type

export const RuntimeInfo = Schema.Struct({
  name: Schema.String,
  available: Schema.Boolean,
  version: Schema.optional(Schema.NullOr(Schema.String)),
  persistent_session: Schema.optional(Schema.Boolean),
  live_steer: Schema.optional(Schema.Boolean),
  interactive_approval: Schema.optional(Schema.Boolean),
  interactive_question: Schema.optional(Schema.Boolean),
  in_flight_recovery: Schema.optional(InFlightRecovery),
  /** v0.9: a task may name its model (submit's `model`). */
  model_override: Schema.optional(Schema.Boolean),
  /** v0.9: where runtime.models gets the list, or "unsupported". */
  model_discovery: Schema.optional(ModelDiscovery),
  detail: Schema.optional(Schema.String)
})
export type RuntimeInfo = typeof RuntimeInfo.Type

/** Profiles rank review=1 < workspace-write=2; a workdir's mode is the ceiling. */
export const profileRank = (profile: Profile | "disabled"): number =>
  profile === "workspace-write" ? 2 : profile === "review" ? 1 : 0
