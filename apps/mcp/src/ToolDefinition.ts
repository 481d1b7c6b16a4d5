import type { AuditFields } from "@serverfs/telemetry-local"
import type { Effect, Schema } from "effect"

/**
 * One MCP tool: its public contract (name, description, annotations, input and output Effect
 * Schemas) and its handler. Errors are tagged domain errors; the call pipeline renders them.
 */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint: boolean
}

/** A result whose content is not the output's JSON (download_binary_file), and its real size. */
export interface RenderedResult {
  readonly content: ReadonlyArray<Record<string, unknown>>
  readonly structuredContent: Record<string, unknown>
  /** What the result costs on the wire, measured as ToolCall's budget measures a normal result. */
  readonly bytes: number
}

export interface ToolDefinition<I, O, R = O> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly annotations: ToolAnnotations
  // biome-ignore lint/suspicious/noExplicitAny: the encoded side of an input schema is whatever JSON decodes into it
  readonly input: Schema.Schema<I, any, never>
  // biome-ignore lint/suspicious/noExplicitAny: outputs are encoded to plain JSON objects
  readonly output: Schema.Schema<O, any, never>
  readonly run: (input: I) => Effect.Effect<R, { readonly _tag: string; readonly message: string }>
  /** Per-tool audit counters (tool-contracts §7); never content, queries or host paths. */
  readonly audit: (input: I, output: R) => AuditFields
  /** Builds the result when it is not the output's JSON; without it the result is `R` encoded. */
  readonly render?: (output: R) => RenderedResult
  /** Tool-level `_meta` advertised in tools/list (e.g. `openai/fileParams`). */
  readonly meta?: Record<string, unknown>
  /** The code an unexpected failure is reported with (no details leak). */
  readonly unexpected: "READ_FAILED" | "MUTATION_IO_ERROR" | "AGENT_BRIDGE_ERROR"
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input and output type
export type AnyTool = ToolDefinition<any, any, any>

export const defineTool = <I, O, R = O>(tool: ToolDefinition<I, O, R>): AnyTool => tool

/** Annotations of the six read tools (tool-contracts §1). */
export const READ_ANNOTATIONS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }
