import { Option, Schema } from "effect"
import { eventuallyAsync } from "./Eventually.js"

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

/**
 * The audit records of a server process from its stderr lines: `audit()` now, `auditWhen(ready)`
 * once `ready` holds (or what there is after `timeoutMs`: the test's assertion then says why).
 */
export const auditReader = (stderrLines: () => ReadonlyArray<string>) => {
  const audit = () => jsonObjectLines(stderrLines())
  const auditWhen = (
    ready: (records: ReadonlyArray<Record<string, unknown>>) => boolean,
    timeoutMs = 5_000
  ) =>
    eventuallyAsync(
      "the audit records",
      async () => {
        const records = audit()
        return ready(records) ? records : undefined
      },
      timeoutMs
    ).catch(() => audit())
  return { audit, auditWhen }
}
