import { InteractionEnded } from "@serverfs/adapters/port"
import type { ApprovalResolution, QuestionResolution } from "@serverfs/domain"
import { Deferred, Effect, Fiber, FiberMap, FiberSet, Option, type Scope } from "effect"

/**
 * What exists of a task only while this process runs it: the scope its lease, guard, deadline
 * and provider run are acquired into, the deferreds its adapter is waiting on, and whether the
 * provider's run has returned. Everything durable lives in the store; after a restart none of
 * this exists, which is why restart reconciliation never pretends a turn survived.
 */
export type Resolution = ApprovalResolution | QuestionResolution

export interface LiveTask {
  readonly taskId: string
  /** Closed when the task's turn ends, however it ends: releases everything acquired into it. */
  readonly scope: Scope.CloseableScope
  readonly waiters: Map<string, Deferred.Deferred<Resolution, InteractionEnded>>
  /** The workdir slot whose writer lease this task holds (workspace-write), if any. */
  leaseSlot: number | undefined
  /** No provider run is active: none started yet, or it returned (success or failure). */
  providerStopped: boolean
}

/**
 * The live tasks of this process and the fibers that drive them: turn fibers in a FiberMap keyed
 * by task id, detached helpers (run stops, expiry timers) in a FiberSet. Both are
 * interrupted when the service's scope closes.
 */
export class LiveTaskRegistry extends Effect.Service<LiveTaskRegistry>()(
  "@serverfs/bridge/LiveTaskRegistry",
  {
    scoped: Effect.gen(function* () {
      const live = new Map<string, LiveTask>()
      const turns = yield* FiberMap.make<string>()
      const helpers = yield* FiberSet.make()

      const get = (taskId: string): Option.Option<LiveTask> => Option.fromNullable(live.get(taskId))

      const failWaiter = (taskId: string, requestId: string, reason: InteractionEnded["reason"]) =>
        Effect.suspend(() => {
          const waiter = live.get(taskId)?.waiters.get(requestId)
          return waiter === undefined
            ? Effect.void
            : Deferred.fail(waiter, new InteractionEnded({ reason })).pipe(Effect.asVoid)
        })

      const resolveWaiter = (taskId: string, requestId: string, resolution: Resolution) =>
        Effect.suspend(() => {
          const waiter = live.get(taskId)?.waiters.get(requestId)
          return waiter === undefined ? Effect.void : Deferred.succeed(waiter, resolution).pipe(Effect.asVoid)
        })

      /** End every interaction the task's provider is waiting on. */
      const failAllWaiters = (taskId: string, reason: InteractionEnded["reason"]) =>
        Effect.suspend(() =>
          Effect.forEach(
            [...(live.get(taskId)?.waiters.keys() ?? [])],
            (id) => failWaiter(taskId, id, reason),
            {
              discard: true
            }
          )
        )

      return {
        get,
        has: (taskId: string): boolean => live.has(taskId),
        all: (): ReadonlyArray<LiveTask> => [...live.values()],
        add: (task: LiveTask): Effect.Effect<void> => Effect.sync(() => live.set(task.taskId, task)),
        remove: (taskId: string): Effect.Effect<void> => Effect.sync(() => live.delete(taskId)),
        failWaiter,
        resolveWaiter,
        failAllWaiters,
        /** Wait until a task's turn has ended and its scope is closed (at once if it is not live). */
        awaitTurn: (taskId: string): Effect.Effect<void> =>
          Option.match(FiberMap.unsafeGet(turns, taskId), {
            onNone: () => Effect.void,
            onSome: (fiber) => Effect.asVoid(Fiber.await(fiber))
          }),
        /** Fork a task's turn fiber; it leaves the map when it ends. */
        run: (taskId: string, turn: Effect.Effect<void>) => FiberMap.run(turns, taskId, turn),
        /** Interrupt a task's turn fiber (and wait for it to end), if it runs. */
        interruptTurn: (taskId: string): Effect.Effect<void> => FiberMap.remove(turns, taskId),
        /** Run a detached helper; interrupted at shutdown at the latest. */
        detach: <A, E>(effect: Effect.Effect<A, E>) => FiberSet.run(helpers, effect)
      } as const
    })
  }
) {}

export const newLiveTask = (taskId: string, scope: Scope.CloseableScope): LiveTask => ({
  taskId,
  scope,
  waiters: new Map(),
  leaseSlot: undefined,
  providerStopped: true
})
