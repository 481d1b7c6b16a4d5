import { describe, expect, it } from "@effect/vitest"
import { timestampOfSeconds } from "../src/index.js"

/**
 * A listing's per-entry timestamp (issue 12: the day-cached form) against its plain definition,
 * Date's ISO text.
 */
const random = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}

describe("listing order and timestamps", () => {
  it("timestampOfSeconds is the ISO text of Date at second precision, across days, years and 1970", () => {
    const next = random(11)
    const iso = (s: number) => `${new Date(s * 1000).toISOString().slice(0, 19)}Z`
    const samples = [0, -1, 59, 60, 3599, 3600, 86_399, 86_400, -86_400, -86_401, 951_782_400, 4_102_444_799]
    for (let i = 0; i < 2000; i++) samples.push(Math.floor((next() - 0.3) * 4e9))
    for (const s of samples) expect(timestampOfSeconds(s)).toBe(iso(s))
  })

  it("timestampOfSeconds throws outside Date's range, as before", () => {
    expect(() => timestampOfSeconds(9e15)).toThrow()
  })
})
