import { performance } from "node:perf_hooks"
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Clock, Duration, Effect, type Scope } from "effect"

/**
 * Gives the heap back once the bridge is idle (issue 12: idle RSS under 80 MiB). The bridge is a
 * daemon that waits most of the time; after start-up or a burst of work its old generation is
 * left at the size the burst needed, full of garbage, and V8's own memory reducer only starts
 * after about eight idle seconds (often later). Here, once half a second passed with the event
 * loop idle and the heap has grown since the last collection, one full compacting collection runs,
 * and V8 returns the freed pages. It costs one full GC per idle period (60–80 ms on this heap
 * under load, measured with --trace-gc), never while a request or a task is being worked on
 * (docs/performance.md, "Bridge submit and memory (issue 12)").
 */

/** How often the loop looks, and how long the event loop must have been idle. */
const PERIOD = Duration.millis(500)
/** At most this share of the last period busy (25 ms of 500) counts as idle. */
const IDLE_UTILIZATION = 0.05
/** Heap growth since the last collection that is worth a collection. */
const GROWTH_BYTES = 1024 * 1024

/** The heap's size: what its objects use, and the pages V8 holds for them (what RSS sees). */
export interface HeapSize {
  readonly used: number
  readonly committed: number
}

const heapSize = (): HeapSize => {
  const stats = getHeapStatistics()
  return { used: stats.used_heap_size, committed: stats.total_heap_size }
}

/**
 * Whether to collect now: the last period was idle and the heap has grown since the last
 * collection — in use, or in pages held. The second matters after a burst that V8 itself ended
 * with a full collection: the objects are gone but their pages are not, since V8 compacts only
 * what it must; the used size is then back where it was and the RSS is not (issue 12: after
 * some bench runs the bridge's RSS stayed at 85 MiB for 20 s, until V8's own memory reducer).
 */
export const shouldCollect = (utilization: number, now: HeapSize, afterLastCollection: HeapSize): boolean =>
  utilization <= IDLE_UTILIZATION &&
  (now.used - afterLastCollection.used >= GROWTH_BYTES ||
    now.committed - afterLastCollection.committed >= GROWTH_BYTES)

/**
 * One full, compacting collection. `--expose-gc` takes effect in contexts created after it is
 * set: a new context hands out its `gc`, which collects the whole isolate (this program's heap
 * too). A plain full GC frees only the pages that are wholly empty; after a submit burst the old
 * generation stayed at 27.5 MiB for 18.7 MiB live, its survivors spread over every page. Compaction
 * moves them together so that the pages can go back; it is switched on for this one collection
 * only, so the collections V8 runs under load keep their usual, shorter pauses.
 */
const compactingCollector = (): (() => void) => {
  setFlagsFromString("--expose-gc")
  const gc: unknown = runInNewContext("gc")
  if (typeof gc !== "function") throw new Error("V8 did not expose gc after --expose-gc")
  return () => {
    setFlagsFromString("--compact-on-every-full-gc")
    try {
      gc()
    } finally {
      setFlagsFromString("--no-compact-on-every-full-gc")
    }
  }
}

/** Runs for the scope's life (the daemon's). */
export const releaseHeapWhenIdle: Effect.Effect<void, never, Scope.Scope> = Effect.gen(function* () {
  const collect = compactingCollector()
  let afterLastCollection: HeapSize = { used: 0, committed: 0 }
  let last = performance.eventLoopUtilization()
  const tick = Effect.sync(() => {
    const now = performance.eventLoopUtilization()
    const utilization = performance.eventLoopUtilization(now, last).utilization
    last = now
    if (!shouldCollect(utilization, heapSize(), afterLastCollection)) return
    collect()
    afterLastCollection = heapSize()
  })
  // Wall time on purpose (as IdleCheckpoint): a test moving the TestClock must not run ticks.
  yield* Effect.forkScoped(
    Effect.forever(Effect.zipRight(Effect.sleep(PERIOD), tick)).pipe(Effect.withClock(Clock.make()))
  )
})
