import { Schema } from "effect"

/** Building blocks shared by the tool input and output schemas. */

/** A JSON integer ≥ min. Plain refinements (no identifier) so the JSON Schema stays inline. */
export const IntAtLeast = (min: number) => Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(min))

/**
 * A required input field with a description for clients. The description goes into the JSON
 * Schema only (the `jsonSchema` annotation): as a plain description it would become the
 * "expected" label of validation errors ("Expected Workdir alias…, actual 7"), and on a property
 * signature it is lost when the struct has defaulted fields (the JSON Schema is built from the
 * encoded side). Not for refinements: there the annotation replaces the generated JSON Schema.
 */
export const described = <S extends Schema.Schema.Any>(schema: S, description: string): S =>
  schema.annotations({ jsonSchema: { description } }) as S

export const WorkdirAlias = described(Schema.String, "Workdir alias, as returned by list_workdirs.")

/**
 * A caller's pattern (find_files `pattern`, search_text `glob`): at most `maxLength` UTF-16 code
 * units (SERVERFS_MAX_PATTERN_LENGTH), so matching stays bounded per name, and without NUL,
 * which no file name contains and no argv can carry to ripgrep. Refused → INVALID_ARGUMENT; the
 * messages never echo the pattern.
 */
export const Pattern = (maxLength: number, description: string) =>
  Schema.String.pipe(
    Schema.maxLength(maxLength, { message: () => `must be at most ${maxLength} characters long` }),
    Schema.filter((text) => !text.includes("\0"), {
      message: () => "must not contain NUL characters",
      jsonSchema: {}
    })
  ).annotations({ jsonSchema: { type: "string", maxLength, description } })

export const RelativePath = described(
  Schema.String,
  'Path relative to the workdir root, "/"-separated. "" is the root.'
)

export const Revision = Schema.String.pipe(Schema.pattern(/^v1:[0-9a-f]{16}$/)).annotations({
  description: "Opaque revision token (v1:…) for compare-and-set; changes with content or metadata."
})

/** RFC 3339 UTC with second precision: YYYY-MM-DDTHH:MM:SSZ. */
export const Timestamp = Schema.String.annotations({ description: "RFC 3339 UTC, second precision." })

export const EntryType = Schema.Literal("file", "directory", "symlink", "other")
export type EntryType = typeof EntryType.Type

export const AccessMode = Schema.Literal("read-only", "read-write")

export const AgentMode = Schema.Literal("disabled", "review", "workspace-write")
export type AgentMode = typeof AgentMode.Type

/** An optional input with a default, advertised in the JSON Schema as `default`. */
export const withDefault = <S extends Schema.Schema.Any>(
  schema: S,
  value: Schema.Schema.Type<S>,
  description: string
) =>
  Schema.optionalWith(schema, { default: () => value }).annotations({
    default: value,
    description
  })
