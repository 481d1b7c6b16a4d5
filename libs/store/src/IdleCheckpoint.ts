import type { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, type Scope } from "effect"

/**
 * WAL checkpoints moved off the request path. SQLite's default checkpoints the WAL back into the
 * database from inside the commit that takes it past 1,000 pages: that commit (a submit, an
 * answer) then also copies the pages and fsyncs, which made it the slowest request in a hundred
 * (bench/: submit p99 about 13 ms with it, about 9 ms without). Here the automatic checkpoint
 * only comes at 10,000 pages (about 40 MiB of WAL, a bound for sustained load), and the writes
 * are checkpointed once the store has been idle for a second — which, between a chat's calls,
 * is nearly always. A PASSIVE checkpoint never waits for readers and never blocks writers for
 * longer than the copy itself.
 */
export interface IdleCheckpoint {
  /** Record that a transaction wrote: a checkpoint is due once the store is idle again. */
  readonly wrote: Effect.Effect<void>
}

const AUTOCHECKPOINT_PAGES = 10_000
const IDLE = Duration.seconds(1)

export const makeIdleCheckpoint = (
  sql: SqlClient.SqlClient
): Effect.Effect<IdleCheckpoint, never, Scope.Scope> =>
  Effect.gen(function* () {
    yield* Effect.orDie(sql.unsafe(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`))
    let lastWrite = 0
    let dirty = false
    const tick = Effect.gen(function* () {
      if (!dirty || performance.now() - lastWrite < Duration.toMillis(IDLE)) return
      dirty = false
      // A failure (the database is busy in another process) leaves it to the next idle second.
      yield* sql
        .unsafe("PRAGMA wal_checkpoint(PASSIVE)")
        .pipe(Effect.catchAll(() => Effect.sync(() => (dirty = true))))
    })
    // Wall time on purpose: a test that moves the TestClock by days must not run a year of
    // one-second ticks.
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Effect.sleep(IDLE), tick)).pipe(Effect.withClock(Clock.make()))
    )
    return {
      wrote: Effect.sync(() => {
        lastWrite = performance.now()
        dirty = true
      })
    }
  })
