import { type Summary, summarize } from "./Stats.js"

/** One way of doing an operation: a server's tool call, a raw syscall, a raw rg run. */
export interface Contender {
  readonly label: string
  /** Performs the operation for iteration `i` (contenders rotate their inputs by `i`). */
  readonly run: (i: number) => Promise<unknown>
  /** Iterations for this contender when it is much slower than the others (default: all). */
  readonly iterations?: number
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
      await contender.run(round)
      own.push(performance.now() - started)
    }
  }
  return new Map([...samples].map(([label, xs]) => [label, summarize(xs)]))
}
