/**
 * A small seeded PRNG (mulberry32): the same seed gives the same tree on every machine, so two
 * runs of the benchmark measure the same bytes.
 */
export class Random {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  pick<T>(items: ReadonlyArray<T>): T {
    return items[Math.floor(this.next() * items.length)]!
  }

  /** A log-uniform integer in [min, max]: many small values, a long tail of large ones. */
  logInt(min: number, max: number): number {
    return Math.round(Math.exp(Math.log(min) + this.next() * (Math.log(max) - Math.log(min))))
  }

  /** `count` distinct indices in [0, n), in ascending order. */
  sample(n: number, count: number): number[] {
    const chosen = new Set<number>()
    while (chosen.size < Math.min(count, n)) chosen.add(Math.floor(this.next() * n))
    return [...chosen].sort((a, b) => a - b)
  }
}
