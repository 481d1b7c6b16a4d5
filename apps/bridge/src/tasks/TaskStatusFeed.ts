import type { TaskStatus } from "@serverfs/domain"
import { TaskStore } from "@serverfs/store"
import { Effect, Option, PubSub, Stream } from "effect"

export interface StatusChange {
  readonly taskId: string
  readonly status: TaskStatus
}

/**
 * Every task status change this process makes, as a stream (issue 11): tests, and later long
 * polling, wait on it instead of polling. Published right after the store committed the change.
 */
export class TaskStatusFeed extends Effect.Service<TaskStatusFeed>()("@serverfs/bridge/TaskStatusFeed", {
  scoped: Effect.gen(function* () {
    const store = yield* TaskStore
    const hub = yield* Effect.acquireRelease(PubSub.unbounded<StatusChange>(), PubSub.shutdown)
    const publish = (change: StatusChange): Effect.Effect<void> => Effect.asVoid(PubSub.publish(hub, change))
    return {
      publish,
      /** Publish a task's status as the store has it now (after a store call that may move it). */
      refresh: (taskId: string): Effect.Effect<void> =>
        Effect.flatMap(store.getTask(taskId), (task) =>
          Option.isSome(task) ? publish({ taskId, status: task.value.status }) : Effect.void
        ),
      /** Changes from the moment the stream is subscribed (scoped: subscribe before you act). */
      changes: Stream.fromPubSub(hub),
      subscribe: PubSub.subscribe(hub)
    } as const
  })
}) {}
