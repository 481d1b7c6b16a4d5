import { SchemaAST as AST, JSONSchema, type Schema } from "effect"

/**
 * The JSON Schema an MCP client sees for an Effect Schema: a plain inline object schema (no
 * `$schema`, no `$ref`, no generated titles), so every client's validator accepts it and the
 * Effect Schema stays the single source of truth.
 */
const strip = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(strip)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$schema" || key === "$id" || key === "title") continue
      out[key] = strip(inner)
    }
    return out
  }
  return value
}

export interface ObjectJsonSchema {
  readonly type: "object"
  readonly properties?: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

const isObjectJsonSchema = (value: unknown): value is ObjectJsonSchema =>
  typeof value === "object" && value !== null && "type" in value && value.type === "object"

export const objectJsonSchema = <A, I>(schema: Schema.Schema<A, I, never>): ObjectJsonSchema => {
  // Effect renders an empty struct as "any object or array"; a tool without inputs takes {}.
  if (
    AST.isTypeLiteral(schema.ast) &&
    schema.ast.propertySignatures.length === 0 &&
    schema.ast.indexSignatures.length === 0
  ) {
    return { type: "object", properties: {}, additionalProperties: false }
  }
  const json = strip(JSONSchema.make(schema))
  if (!isObjectJsonSchema(json) || JSON.stringify(json).includes("$ref")) {
    throw new Error("tool schemas must be inline object schemas")
  }
  return json
}
