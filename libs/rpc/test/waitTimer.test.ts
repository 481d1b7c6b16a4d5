/**
 * The timer bounding a wait on a socket: a bound beyond setTimeout's range (about 24.8 days)
 * must not fire at once, which is what setTimeout does with it; a bound in range fires.
 */
import { describe, expect, it } from "@effect/vitest"
import { waitTimer } from "../src/WaitTimer.js"

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

describe("waitTimer", () => {
  it("a bound beyond setTimeout's range waits instead of firing at once", async () => {
    let fired = false
    const timer = waitTimer(2 ** 40, () => {
      fired = true
    })
    await sleep(50)
    clearTimeout(timer)
    expect(fired).toBe(false)
  })

  it("a bound in range fires, and a negative one fires at the next turn", async () => {
    const fired: string[] = []
    waitTimer(10, () => fired.push("ten"))
    waitTimer(-5, () => fired.push("negative"))
    await sleep(100)
    expect(fired).toEqual(["negative", "ten"])
  })
})
