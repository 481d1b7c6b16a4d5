import type { NotRetainedReason } from "@serverfs/domain"

/**
 * Why a task id has no slot, for the last `capacity` ids that lost or never got one (evicted,
 * capacity_exhausted, recording_unavailable). A ring, so the memory is bounded (§7.1: no
 * unbounded task index); an id that fell out of it is simply unknown to the recorder, and the
 * caller reports `not_retained` without guessing a reason (§8.2).
 */
export class RememberedIds {
  private readonly reasons = new Map<string, NotRetainedReason>()
  private readonly ring: Array<string | undefined>
  private next = 0

  constructor(capacity: number) {
    this.ring = new Array<string | undefined>(capacity).fill(undefined)
  }

  has(taskId: string): boolean {
    return this.reasons.has(taskId)
  }

  reasonOf(taskId: string): NotRetainedReason | undefined {
    return this.reasons.get(taskId)
  }

  /** Callers remember an id at most once (one slot per task id), so the ring holds no duplicates. */
  remember(taskId: string, reason: NotRetainedReason): void {
    const oldest = this.ring[this.next]
    if (oldest !== undefined) this.reasons.delete(oldest)
    this.ring[this.next] = taskId
    this.reasons.set(taskId, reason)
    this.next = (this.next + 1) % this.ring.length
  }

  get size(): number {
    return this.reasons.size
  }
}
