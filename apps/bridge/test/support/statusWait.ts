/**
 * Waiting for a task's status in the test process: on the bridge's status feed (every change
 * the task plane makes is published there), never by polling. Subscribed before the current
 * status is read, so no change can fall between the two.
 */
import type { TaskStatus, TaskView } from "@serverfs/domain"
import { Effect, Queue } from "effect"
import { TaskService, TaskStatusFeed } from "../../src/index.js"

export const awaitStatus = (
  taskId: string,
  statuses: ReadonlyArray<TaskStatus>
): Effect.Effect<TaskView, never, TaskService | TaskStatusFeed> =>
  Effect.scoped(
    Effect.gen(function* () {
      const feed = yield* TaskStatusFeed
      const tasks = yield* TaskService
      const changes = yield* feed.subscribe
      let status = (yield* Effect.orDie(tasks.get(taskId))).status
      while (!statuses.includes(status)) {
        const change = yield* Queue.take(changes)
        if (change.taskId === taskId) status = change.status
      }
      return yield* Effect.orDie(tasks.get(taskId))
    })
  )
