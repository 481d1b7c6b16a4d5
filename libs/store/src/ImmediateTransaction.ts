import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Scope } from "effect"

/**
 * `withTransaction` opening with `BEGIN IMMEDIATE` (bridge-internals §5). The stock SQLite
 * client begins with a deferred `BEGIN`, which takes the write lock only at the first write: a
 * read-then-write transaction could then fail with SQLITE_BUSY_SNAPSHOT against another
 * process, or decide on data another writer is about to change. IMMEDIATE takes the write lock
 * first (waiting up to busy_timeout), so every check inside a mutation sees the final state.
 */
export const makeImmediateTransaction = (
  sql: SqlClient.SqlClient
): (<A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError.SqlError, R>) =>
  SqlClient.makeWithTransaction({
    transactionTag: SqlClient.TransactionConnection,
    spanAttributes: [["db.system.name", "sqlite"]],
    acquireConnection: Effect.flatMap(Scope.make(), (scope) =>
      Effect.map(Scope.extend(sql.reserve, scope), (connection) => [scope, connection] as const)
    ),
    begin: (connection) => connection.executeUnprepared("BEGIN IMMEDIATE", [], undefined),
    savepoint: (connection, id) => connection.executeUnprepared(`SAVEPOINT effect_sql_${id}`, [], undefined),
    commit: (connection) => connection.executeUnprepared("COMMIT", [], undefined),
    rollback: (connection) => connection.executeUnprepared("ROLLBACK", [], undefined),
    rollbackSavepoint: (connection, id) =>
      connection.executeUnprepared(`ROLLBACK TO SAVEPOINT effect_sql_${id}`, [], undefined)
  })
