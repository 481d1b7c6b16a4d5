/**
 * A submit's insert is one statement (TaskRows.insertIfAllowed, issue 12): the row goes in only
 * if its id is new, its idempotency key unused and fewer than the cap of tasks are active. These
 * run the statement itself, so that a check it lost (or a row it wrote when refused) fails here
 * even though `insertTask` would still answer right through its transaction. The statement runs
 * on a second connection to the same file, as another process's would.
 */
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TaskStore } from "../src/index.js"
import type { TaskRecord } from "../src/TaskRecord.js"
import { insertIfAllowed } from "../src/TaskRows.js"
import { insertFinished, insertQueued, queryPlan, scopedTempState, withStore } from "./helpers.js"

/** A stored task's row under another id (and key): a row the statement may insert. */
const another = (template: TaskRecord, n: number, idempotency_key: string | null = null): TaskRecord => ({
  ...template,
  task_id: `agt_${n.toString(16).padStart(24, "0")}`,
  idempotency_key
})

/** The stored row of a task inserted through the store (its status queued). */
const storedRow = (taskId: string) =>
  Effect.flatMap(TaskStore, (store) => Effect.map(store.getTask(taskId), Option.getOrThrow))

const insertedIds = (record: TaskRecord, maxActiveTasks: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(insertIfAllowed(sql, record, maxActiveTasks), (rows) => rows.map((row) => row.task_id))
  )

describe("the conditional insert of a submit", () => {
  it.scoped("inserts the row when the checks pass and nothing when one refuses", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const template = yield* storedRow(yield* insertQueued({ idempotency_key: "first" }))
          // Under the cap (one active task, cap two): inserted, exactly as given.
          const fresh = another(template, 1)
          expect(yield* insertedIds(fresh, 2)).toEqual([fresh.task_id])
          expect(yield* store.getTask(fresh.task_id)).toEqual(Option.some(fresh))
          // An id already stored: refused, the stored row unchanged.
          expect(yield* insertedIds({ ...fresh, profile: "changed" }, 10)).toEqual([])
          expect(yield* store.getTask(fresh.task_id)).toEqual(Option.some(fresh))
          // A key already used: refused; a null key never collides.
          expect(yield* insertedIds(another(template, 2, "first"), 10)).toEqual([])
          expect(yield* store.getTask(another(template, 2).task_id)).toEqual(Option.none())
          expect(yield* insertedIds(another(template, 3), 10)).toHaveLength(1)
          // Three active now: a cap of three refuses, finished tasks do not count.
          yield* insertFinished(5)
          expect(yield* insertedIds(another(template, 4), 3)).toEqual([])
          expect(yield* store.getTask(another(template, 4).task_id)).toEqual(Option.none())
          expect(yield* insertedIds(another(template, 4), 4)).toHaveLength(1)
          expect(yield* store.listNonTerminal()).toHaveLength(4)
        }).pipe(Effect.provide(SqliteClient.layer({ filename: path.join(temp.stateDir, "state.sqlite3") })))
      )
    )
  )

  it.scoped("reads by index only: the id, the key and each active status are lookups", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const template = yield* withStore(
          temp.stateDir,
          Effect.flatMap(insertQueued({ idempotency_key: "k" }), storedRow)
        )
        const plan = yield* queryPlan(temp.stateDir, (sql) =>
          insertIfAllowed(sql, another(template, 9, "j"), 4)
        )
        expect(plan).toMatch(/SEARCH tasks USING (COVERING )?INDEX sqlite_autoindex_tasks_1 \(task_id=\?\)/)
        expect(plan).toMatch(
          /SEARCH tasks USING (COVERING )?INDEX tasks_idempotency_key \(idempotency_key=\?\)/
        )
        expect(plan).toMatch(/SEARCH tasks USING COVERING INDEX tasks_status \(status=\?\)/)
        // The one scan is of the constant row the SELECT without FROM produces.
        expect(plan).not.toMatch(/SCAN (?!CONSTANT ROW)/)
      })
    )
  )
})
