/**
 * IdleHeap: the bridge gives its heap back once it is idle (issue 12, idle RSS). The decision is
 * a pure rule; the collector itself is run in this process: garbage made, the event loop left
 * idle, and a forced major collection (only the collector forces one here) gives it back.
 */
import { constants, PerformanceObserver } from "node:perf_hooks"
import { getHeapStatistics } from "node:v8"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { releaseHeapWhenIdle, shouldCollect } from "../src/IdleHeap.js"

const MiB = 1024 * 1024

/** A GC entry's detail: a major collection that someone forced (gc()), not one V8 chose. */
const isForcedMajor = (detail: unknown): boolean =>
  typeof detail === "object" &&
  detail !== null &&
  Reflect.get(detail, "kind") === constants.NODE_PERFORMANCE_GC_MAJOR &&
  (Number(Reflect.get(detail, "flags")) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0

describe("IdleHeap", () => {
  it("collects only after an idle period, and only when the heap has grown", () => {
    const heap = (used: number, committed: number) => ({ used: used * MiB, committed: committed * MiB })
    const after = heap(20, 22)
    expect(shouldCollect(0, heap(30, 32), after)).toBe(true)
    expect(shouldCollect(0.05, heap(30, 32), after)).toBe(true)
    // Busy: a request or a task is being worked on.
    expect(shouldCollect(0.5, heap(30, 32), after)).toBe(false)
    // Idle, but nothing to give back since the last collection.
    expect(shouldCollect(0, heap(20.5, 22.5), after)).toBe(false)
    // A burst that V8 ended with its own full collection: the objects are gone, their pages held.
    expect(shouldCollect(0, heap(20.2, 30), after)).toBe(true)
  })

  it.live(
    "gives the garbage of a burst back once the event loop is idle",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* releaseHeapWhenIdle
          // Short-lived objects that survive long enough to reach the old generation.
          let held: Array<{ readonly n: number; readonly s: string }> | undefined = Array.from(
            { length: 300_000 },
            (_, n) => ({ n, s: `garbage ${n}` })
          )
          const withGarbage = getHeapStatistics().used_heap_size
          expect(held.length).toBe(300_000)
          held = undefined
          // Generous: the collector looks twice a second; a loaded machine may delay its ticks.
          const forced = yield* Effect.async<void>((resume) => {
            const observer = new PerformanceObserver((list) => {
              for (const entry of list.getEntries()) {
                if (isForcedMajor(Reflect.get(entry, "detail"))) {
                  observer.disconnect()
                  resume(Effect.void)
                  return
                }
              }
            })
            observer.observe({ entryTypes: ["gc"] })
            return Effect.sync(() => observer.disconnect())
          }).pipe(Effect.timeout("30 seconds"), Effect.either)
          expect(forced._tag).toBe("Right")
          expect(getHeapStatistics().used_heap_size).toBeLessThan(withGarbage - 8 * MiB)
        })
      ),
    60_000
  )
})
