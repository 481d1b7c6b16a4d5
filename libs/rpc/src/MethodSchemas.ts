import { BRIDGE_METHODS, type BridgeMethod } from "@serverfs/domain"
import type { Schema } from "effect"

/**
 * A method's params and result schemas, widened to one type so generic framing code can
 * decode and encode with them; the method-specific types come back at the typed edges
 * (`BridgeClient.call`).
 */
export interface MethodSchemas {
  readonly params: Schema.Schema.AnyNoContext
  readonly result: Schema.Schema.AnyNoContext
}

export const methodSchemas = (method: BridgeMethod): MethodSchemas => BRIDGE_METHODS[method]
