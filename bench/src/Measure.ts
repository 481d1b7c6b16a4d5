import { type Summary, summarize } from "./Stats.js"

/** One way of doing an operation: a server's tool call, a raw syscall, a raw rg run. */
export interface Contender {
  readonly label: string
  /** Performs the operation for iteration `i` (contenders rotate their inputs by `i`). */
  readonly run: (i: number) => Promise<unknown>
  /** Iterations for this contender when it is much slower than the others (default: all). */
  readonly iterations?: number
  /**
   * The sample is what `run` resolves to (milliseconds it timed itself), not the wall time of
   * the whole call: for untimed set-up or clean-up around the timed part (waiting for a task to
   * finish, creating the file a delete removes).
   */
  readonly selfTimed?: boolean
}

export interface MeasureOptions {
  readonly warmup: number
  readonly iterations: number
}

/**
 * Warm each contender up, then time them in interleaved rounds (the order rotates every round),
 * so that drift on a busy two-core machine (page cache, CPU frequency, a neighbour's build) hits
 * every contender alike instead of whichever ran last.
 */
export const measure = async (
  contenders: ReadonlyArray<Contender>,
  options: MeasureOptions
): Promise<Map<string, Summary>> => {
  for (const contender of contenders) {
    const warmup = Math.min(options.warmup, contender.iterations ?? options.warmup)
    for (let i = 0; i < warmup; i++) await contender.run(i)
  }
  const samples = new Map<string, number[]>(contenders.map((c) => [c.label, []]))
  for (let round = 0; round < options.iterations; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(round + k) % contenders.length]!
      const own = samples.get(contender.label)!
      if (own.length >= (contender.iterations ?? options.iterations)) continue
      const started = performance.now()
      const outcome = await contender.run(round)
      const elapsed = performance.now() - started
      if (contender.selfTimed === true) {
        if (typeof outcome !== "number")
          throw new Error(`${contender.label}: a self-timed run returned no time`)
        own.push(outcome)
      } else {
        own.push(elapsed)
      }
    }
  }
  return new Map([...samples].map(([label, xs]) => [label, summarize(xs)]))
}
