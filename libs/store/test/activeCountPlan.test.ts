/**
 * The active-task cap that every submit checks (TaskRows.insertTask) counts only the active tasks,
 * whatever the number of finished ones retained: lookups of the active statuses in the status
 * index. `status NOT IN (terminal)` scanned the whole index (issue 12: 0.66 ms a submit with
 * 5,000 tasks retained).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TaskStore } from "../src/index.js"
import { activeTaskCount } from "../src/TaskRows.js"
import { insertFinished, insertQueued, newTask, queryPlan, scopedTempState, withStore } from "./helpers.js"

describe("the active-task count", () => {
  it.scoped("counts every active status and no finished task, by searching the status index", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            yield* insertFinished(30)
            yield* insertQueued()
            const starting = yield* insertQueued()
            yield* store.transition(starting, "starting")
            const running = yield* insertQueued()
            yield* store.transition(running, "starting")
            yield* store.transition(running, "running")
            // The cap sees exactly the three active tasks, none of the thirty finished ones.
            const refused = yield* Effect.flip(store.insertTask(yield* newTask(), { maxActiveTasks: 3 }))
            expect(refused._tag).toBe("AGENT_TASK_LIMIT_REACHED")
            yield* store.insertTask(yield* newTask(), { maxActiveTasks: 4 })
            expect(yield* store.listNonTerminal()).toHaveLength(4)
          })
        )
        const plan = yield* queryPlan(temp.stateDir, activeTaskCount)
        expect(plan).toMatch(/SEARCH tasks USING COVERING INDEX tasks_status \(status=\?\)/)
        expect(plan).not.toMatch(/SCAN/)
      })
    )
  )
})
