import { Effect } from "effect"

/**
 * CPU work over large arrays done in slices, handing the event loop back between two slices
 * (issue 14: filtering and sorting a 200,000-entry listing in one go held every other call for
 * about a second). A slice is about SLICE_MS milliseconds of work.
 *
 * The yield is a macrotask (setImmediate), not Effect.yieldNow: the default scheduler may resume
 * a yielded fiber from a microtask, which lets no I/O callback run in between.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * Work between two yields is bounded in time, not in elements: a policy check or a comparison
 * costs from well under a microsecond to tens of them depending on the rules and the machine's
 * load. The clock is read every CHECK_EVERY elements.
 */
export const SLICE_MS = 8
const CHECK_EVERY = 128
/** Runs sorted natively before merging: small enough to stay within a slice on a slow machine. */
const RUN = 1024

/** A slice's clock: true once the current slice has used its time. */
const sliceClock = () => {
  let started = performance.now()
  return {
    spent: (): boolean => performance.now() - started >= SLICE_MS,
    restart: (): void => {
      started = performance.now()
    }
  }
}

/** `items.filter(keep)`, yielding between slices. */
export const filterInSlices = <A>(items: ReadonlyArray<A>, keep: (item: A) => boolean): Effect.Effect<A[]> =>
  Effect.gen(function* () {
    const kept: A[] = []
    const clock = sliceClock()
    for (let i = 0; i < items.length; i++) {
      if (i % CHECK_EVERY === 0 && clock.spent()) {
        yield* yieldToEventLoop
        clock.restart()
      }
      if (keep(items[i]!)) kept.push(items[i]!)
    }
    return kept
  })

/**
 * A stable sort of `items` by `compare`, yielding between slices: runs of RUN elements are
 * sorted natively, then merged bottom-up. Small inputs are sorted in one go.
 */
export const sortInSlices = <A>(
  items: ReadonlyArray<A>,
  compare: (a: A, b: A) => number
): Effect.Effect<A[]> =>
  Effect.gen(function* () {
    let source = [...items]
    const n = source.length
    if (n <= RUN) return source.sort(compare)
    const clock = sliceClock()
    for (let start = 0; start < n; start += RUN) {
      if (clock.spent()) {
        yield* yieldToEventLoop
        clock.restart()
      }
      const run = source.slice(start, start + RUN).sort(compare)
      for (let i = 0; i < run.length; i++) source[start + i] = run[i]!
    }
    let target: A[] = new Array<A>(n)
    let sinceCheck = 0
    for (let width = RUN; width < n; width *= 2) {
      for (let left = 0; left < n; left += 2 * width) {
        const middle = Math.min(left + width, n)
        const right = Math.min(left + 2 * width, n)
        let i = left
        let j = middle
        for (let k = left; k < right; k++) {
          // `<= 0` takes from the left run on ties: stable.
          target[k] =
            i < middle && (j >= right || compare(source[i]!, source[j]!) <= 0) ? source[i++]! : source[j++]!
          if (++sinceCheck >= CHECK_EVERY) {
            sinceCheck = 0
            if (clock.spent()) {
              yield* yieldToEventLoop
              clock.restart()
            }
          }
        }
      }
      const swap = source
      source = target
      target = swap
    }
    return source
  })
