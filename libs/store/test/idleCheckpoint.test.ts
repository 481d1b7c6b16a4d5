/**
 * WAL checkpoints happen when the store is idle, not inside a request's commit: the automatic
 * checkpoint is pushed out to 10,000 pages, and pages written before a quiet second reach the
 * database file without any further commit.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeIdleCheckpoint } from "../src/IdleCheckpoint.js"
import { scopedTempState } from "./helpers.js"

describe("idle checkpoints", () => {
  it.scopedLive("a megabyte written then left alone reaches the database file within about a second", () =>
    Effect.gen(function* () {
      const temp = yield* scopedTempState
      fs.mkdirSync(temp.stateDir, { mode: 0o700 })
      const database = path.join(temp.stateDir, "state.sqlite3")
      return yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const checkpoint = yield* makeIdleCheckpoint(sql)
        const [setting] = yield* sql<{ readonly wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`
        expect(setting?.wal_autocheckpoint).toBe(10_000)
        yield* sql`CREATE TABLE blobs (b BLOB)`
        yield* sql`INSERT INTO blobs VALUES (zeroblob(1048576))`
        yield* checkpoint.wrote
        // Committed, but still only in the WAL: 256 pages are far below the automatic threshold.
        expect(fs.statSync(database).size).toBeLessThan(1_048_576)
        let size = 0
        for (let waited = 0; waited < 50 && size < 1_048_576; waited++) {
          yield* Effect.sleep("100 millis")
          size = fs.statSync(database).size
        }
        expect(size).toBeGreaterThanOrEqual(1_048_576)
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename: database })))
    })
  )
})
