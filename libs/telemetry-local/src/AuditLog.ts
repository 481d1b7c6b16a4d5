import { Clock, Effect, Layer } from "effect"
import { AuditSink } from "./AuditSink.js"

/**
 * The structured log of tool-contracts §7: one JSON object per line,
 * `{"timestamp":"…Z","level":"INFO","event":<name>, …fields}`.
 *
 * Callers pass typed counters only. What must never appear here — file content, edit texts,
 * search queries, prompts, answers, host paths, secrets — is kept out by construction: no
 * call site hands this service a value of that kind (the audit-hygiene tests scan every line).
 */
export type AuditLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR"
export type AuditValue = string | number | boolean | null | ReadonlyArray<string>
export type AuditFields = Readonly<Record<string, AuditValue | undefined>>

const RANK: Record<AuditLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 }

export interface AuditLogOptions {
  readonly level: AuditLevel
}

export class AuditLog extends Effect.Service<AuditLog>()("@serverfs/telemetry-local/AuditLog", {
  accessors: true,
  effect: Effect.gen(function* () {
    const sink = yield* AuditSink
    let threshold = RANK.INFO
    // The timestamp comes from the Clock (a test's TestClock included); a record below the
    // threshold costs no clock read.
    const emit = (level: AuditLevel, event: string, fields: AuditFields = {}): Effect.Effect<void> =>
      Effect.suspend(() =>
        RANK[level] < threshold
          ? Effect.void
          : Effect.map(Clock.currentTimeMillis, (now) => {
              const record: Record<string, AuditValue> = {
                // The same text as DateTime.formatIso, without building a DateTime per line.
                timestamp: new Date(now).toISOString(),
                level,
                event
              }
              for (const [key, value] of Object.entries(fields)) if (value !== undefined) record[key] = value
              sink.write(JSON.stringify(record))
            })
      )
    const setLevel = (level: AuditLevel): Effect.Effect<void> =>
      Effect.sync(() => {
        threshold = RANK[level]
      })
    return { emit, setLevel } as const
  })
}) {
  /** The live audit log on stderr at a given level. */
  static readonly live = (options: AuditLogOptions): Layer.Layer<AuditLog> =>
    Layer.effectDiscard(AuditLog.setLevel(options.level)).pipe(
      Layer.provideMerge(AuditLog.Default),
      Layer.provide(AuditSink.stderr)
    )
}
