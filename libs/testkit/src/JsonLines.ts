import { Option, Schema } from "effect"

/**
 * The JSON-object lines of a process's stderr (the audit log, the bridge's log), decoded rather
 * than cast: a line that is not a JSON object (a human line such as
 * `ServerFS: configuration error: …`) is skipped.
 */
const decodeObjectLine = Schema.decodeUnknownOption(
  Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
)

export const jsonObjectLines = (lines: ReadonlyArray<string>): ReadonlyArray<Record<string, unknown>> =>
  lines.flatMap((line) => Option.toArray(decodeObjectLine(line)))
