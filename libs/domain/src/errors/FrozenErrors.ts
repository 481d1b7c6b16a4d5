import { Schema } from "effect"
import { AGENT_ERRORS } from "../agent/AgentErrors.js"
import { FILESYSTEM_ERRORS } from "./ErrorCode.js"

/**
 * THE frozen-error registry: every code a client can ever see, filesystem plane and agent plane,
 * each with its one class. The code lists (FilesystemErrorCode, AgentErrorCode, FrozenErrorCode),
 * the RPC client's decoding of a failure back into its class, and the docs check
 * (scripts/docs-config.mjs: a row in docs/errors.md per code) all derive from it. The two planes
 * are disjoint (checked by libs/domain/test/errors.test.ts).
 */
export const FROZEN_ERRORS = { ...FILESYSTEM_ERRORS, ...AGENT_ERRORS } as const

export type FrozenErrorCode = keyof typeof FROZEN_ERRORS
export type FrozenError = InstanceType<(typeof FROZEN_ERRORS)[FrozenErrorCode]>

/** Every frozen code: the filesystem plane's, then the agent plane's. */
export const FROZEN_ERROR_CODES = Object.keys(FROZEN_ERRORS) as ReadonlyArray<FrozenErrorCode>
export const FrozenErrorCode = Schema.Literal(
  ...(FROZEN_ERROR_CODES as [FrozenErrorCode, ...Array<FrozenErrorCode>])
)

export const isFrozenErrorCode = (code: string): code is FrozenErrorCode => Object.hasOwn(FROZEN_ERRORS, code)

/** The value is an instance of the registered class of its own tag (not merely shaped like one). */
export const isFrozenError = (value: unknown): value is FrozenError => {
  if (typeof value !== "object" || value === null || !("_tag" in value)) return false
  const tag = value._tag
  return typeof tag === "string" && isFrozenErrorCode(tag) && value instanceof FROZEN_ERRORS[tag]
}
