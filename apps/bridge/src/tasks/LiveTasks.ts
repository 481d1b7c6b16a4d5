import type { InteractionEnded } from "@serverfs/adapters/port"
import type { ApprovalResolution, QuestionResolution } from "@serverfs/domain"
import type { Deferred, Fiber } from "effect"

/**
 * What exists of a task only while this process runs it: the fiber driving its turn, the
 * deferreds its adapter is waiting on, and the reason it is being stopped. Everything durable
 * lives in the store; after a restart none of this exists, which is why restart
 * reconciliation never pretends a turn survived.
 */
export type StopReason = "cancelled" | "shutdown" | "timed-out" | "interaction-expired"

export interface LiveTask {
  readonly taskId: string
  fiber: Fiber.RuntimeFiber<void, never> | undefined
  /** The fiber that interrupts the task at its deadline. */
  deadline: Fiber.RuntimeFiber<void, never> | undefined
  readonly waiters: Map<string, Deferred.Deferred<ApprovalResolution | QuestionResolution, InteractionEnded>>
  stopReason: StopReason | undefined
  /** The workdir slot whose writer lease this task holds (workspace-write), if any. */
  leaseSlot: number | undefined
}

export const newLiveTask = (taskId: string): LiveTask => ({
  taskId,
  fiber: undefined,
  deadline: undefined,
  waiters: new Map(),
  stopReason: undefined,
  leaseSlot: undefined
})
