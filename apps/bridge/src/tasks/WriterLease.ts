import { Effect } from "effect"
import type { BridgeLeases } from "../leases/BridgeLeases.js"
import type { LiveTask } from "./LiveTasks.js"

/**
 * A workspace-write task's writer lease on its workdir, held until the surrounding scope closes
 * (the task's own scope, at submit and at re-attachment after a restart). While it is held the
 * live task names the slot (`leaseSlot`, what cancellation and the terminal paths read); the name
 * is cleared before the lease is released.
 */
export const holdWriterLease = (
  leases: BridgeLeases,
  liveTask: LiveTask,
  workdir: { readonly slot: number; readonly alias: string }
) =>
  Effect.acquireRelease(
    Effect.tap(leases.acquire(workdir.slot, workdir.alias), () =>
      Effect.sync(() => {
        liveTask.leaseSlot = workdir.slot
      })
    ),
    () =>
      Effect.zipRight(
        Effect.sync(() => {
          liveTask.leaseSlot = undefined
        }),
        leases.release(workdir.slot)
      )
  )
