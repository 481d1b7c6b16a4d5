/**
 * The memory every request body may hold at once (SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES). A body is
 * charged as its bytes arrive and until its request is answered, so many clients each sending
 * one body just under the per-request limit cannot add up to more than the budget: the one that
 * would go past it is refused (503) instead. Plain counting on the event loop, no locks needed.
 */
export interface BodyBudget {
  /** Charge `bytes`; false (and nothing charged) when that would exceed the budget. */
  readonly take: (bytes: number) => boolean
  readonly give: (bytes: number) => void
  readonly held: () => number
}

export const makeBodyBudget = (limit: number): BodyBudget => {
  let held = 0
  return {
    take: (bytes) => {
      if (held + bytes > limit) return false
      held += bytes
      return true
    },
    give: (bytes) => {
      held = Math.max(0, held - bytes)
    },
    held: () => held
  }
}
