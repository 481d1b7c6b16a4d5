import { Cause, Effect, HashMap, Layer, Logger, type LogLevel } from "effect"
import { AuditSink } from "./AuditSink.js"

/**
 * Effect's own log calls (`Effect.logWarning`, failures the runtime reports) as JSON lines through
 * the same sink as the audit log, so stderr carries one format and stdout carries nothing.
 */
const levelName = (level: LogLevel.LogLevel): string => {
  switch (level._tag) {
    case "Warning":
      return "WARNING"
    case "Fatal":
    case "Error":
      return "ERROR"
    case "Debug":
    case "Trace":
      return "DEBUG"
    default:
      return "INFO"
  }
}

/**
 * Only the kind of a failure is logged, never its text or stack: an OS error's text can carry a
 * host path, and a stack carries install paths. Tagged domain errors are identified by code.
 */
const kindOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const tagged = error as { readonly _tag?: unknown; readonly code?: unknown; readonly name?: unknown }
    if (typeof tagged._tag === "string") return tagged._tag
    if (typeof tagged.code === "string") return tagged.code
    if (typeof tagged.name === "string") return tagged.name
  }
  return typeof error
}

const causeSummary = (cause: Cause.Cause<unknown>): ReadonlyArray<string> => [
  ...Array.from(Cause.failures(cause), kindOf),
  ...Array.from(Cause.defects(cause), (d) => `defect:${kindOf(d)}`),
  ...(Cause.isInterruptedOnly(cause) ? ["interrupted"] : [])
]

const render = (message: unknown): string =>
  Array.isArray(message) ? message.map(String).join(" ") : String(message)

export const JsonLoggerLive: Layer.Layer<never, never, AuditSink> = Layer.unwrapEffect(
  Effect.map(AuditSink, (sink) =>
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message, cause, annotations, date }) => {
        const record: Record<string, unknown> = {
          timestamp: date.toISOString(),
          level: levelName(logLevel),
          event: "log",
          message: render(message)
        }
        for (const [key, value] of HashMap.toEntries(annotations)) record[key] = value
        if (!Cause.isEmpty(cause)) record.cause = causeSummary(cause)
        sink.write(JSON.stringify(record))
      })
    )
  )
)
