import { createHash } from "node:crypto"
import { Schema } from "effect"
import { InFlightRecovery } from "./Runtime.js"

/**
 * The immutable execution manifest (spec v0.7 §2.4): the facts needed to interpret a result
 * later, fixed at task creation and stored with its SHA-256. No host path is included.
 */
export const Manifest = Schema.Struct({
  schema_version: Schema.Literal(2),
  bridge_version: Schema.String,
  protocol_version: Schema.Literal(1),
  runtime: Schema.Struct({
    name: Schema.String,
    version: Schema.NullOr(Schema.String),
    in_flight_recovery: InFlightRecovery
  }),
  workspace: Schema.Struct({
    alias: Schema.String,
    slot: Schema.Number,
    relative_cwd: Schema.String,
    profile: Schema.String
  }),
  policy: Schema.Struct({
    read_only: Schema.Boolean,
    agent_mode: Schema.String,
    policy_sha256: Schema.String
  }),
  model: Schema.Struct({ requested: Schema.NullOr(Schema.String) }),
  limits: Schema.Record({ key: Schema.String, value: Schema.Number }),
  continuation: Schema.Struct({ from_task_id: Schema.NullOr(Schema.String) }),
  correlation_id: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  deadline_at: Schema.String
})
export type Manifest = typeof Manifest.Type

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** Canonical JSON: sorted keys, compact, no NaN/Infinity (they are refused, not coerced). */
export const canonicalJson = (value: unknown): string => {
  const encode = (v: unknown): Json => {
    if (v === null || typeof v === "string" || typeof v === "boolean") return v
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new Error("canonical JSON has no NaN or Infinity")
      return v
    }
    if (Array.isArray(v)) return v.map(encode)
    if (typeof v === "object") {
      const out: Record<string, Json> = {}
      for (const key of Object.keys(v as object).sort()) {
        const inner = (v as Record<string, unknown>)[key]
        if (inner !== undefined) out[key] = encode(inner)
      }
      return out
    }
    throw new Error(`canonical JSON cannot encode a ${typeof v}`)
  }
  return JSON.stringify(encode(value))
}

export const sha256Hex = (text: string | Uint8Array): string =>
  createHash("sha256").update(text).digest("hex")
