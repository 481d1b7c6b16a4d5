import { Effect } from "effect"

/**
 * CPU work over large arrays done in slices, handing the event loop back between two slices
 * (issue 14: filtering and sorting a 200,000-entry listing in one go held every other call for
 * about a second). A slice is a few milliseconds of work at most.
 *
 * The yield is a macrotask (setImmediate), not Effect.yieldNow: the default scheduler may resume
 * a yielded fiber from a microtask, which lets no I/O callback run in between.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Elements handled between two yields. */
const SLICE = 4096

/** `items.filter(keep)`, yielding between slices. */
export const filterInSlices = <A>(items: ReadonlyArray<A>, keep: (item: A) => boolean): Effect.Effect<A[]> =>
  Effect.gen(function* () {
    const kept: A[] = []
    for (let start = 0; start < items.length; start += SLICE) {
      if (start > 0) yield* yieldToEventLoop
      const end = Math.min(items.length, start + SLICE)
      for (let i = start; i < end; i++) if (keep(items[i]!)) kept.push(items[i]!)
    }
    return kept
  })

/**
 * A stable sort of `items` by `compare`, yielding between slices: runs of SLICE elements are
 * sorted natively, then merged bottom-up, yielding every SLICE merged elements. Small inputs are
 * sorted in one go.
 */
export const sortInSlices = <A>(
  items: ReadonlyArray<A>,
  compare: (a: A, b: A) => number
): Effect.Effect<A[]> =>
  Effect.gen(function* () {
    let source = [...items]
    const n = source.length
    if (n <= SLICE) return source.sort(compare)
    for (let start = 0; start < n; start += SLICE) {
      if (start > 0) yield* yieldToEventLoop
      const run = source.slice(start, start + SLICE).sort(compare)
      for (let i = 0; i < run.length; i++) source[start + i] = run[i]!
    }
    let target: A[] = new Array<A>(n)
    let sinceYield = 0
    for (let width = SLICE; width < n; width *= 2) {
      for (let left = 0; left < n; left += 2 * width) {
        const middle = Math.min(left + width, n)
        const right = Math.min(left + 2 * width, n)
        let i = left
        let j = middle
        for (let k = left; k < right; k++) {
          // `<= 0` takes from the left run on ties: stable.
          target[k] =
            i < middle && (j >= right || compare(source[i]!, source[j]!) <= 0) ? source[i++]! : source[j++]!
          if (++sinceYield >= SLICE) {
            sinceYield = 0
            yield* yieldToEventLoop
          }
        }
      }
      const swap = source
      source = target
      target = swap
    }
    return source
  })
