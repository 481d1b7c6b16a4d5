import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Ref } from "effect"
import { eventually, eventuallyAsync, NotReached } from "../src/Eventually.js"

describe("eventually", () => {
  it.live("retries until the attempt yields a value, and returns it", () =>
    Effect.gen(function* () {
      const tries = yield* Ref.make(0)
      const value = yield* eventually(
        "the third try",
        Ref.updateAndGet(tries, (n) => n + 1).pipe(Effect.map((n) => (n >= 3 ? `try ${n}` : undefined))),
        { interval: "1 millis" }
      )
      expect(value).toBe("try 3")
    })
  )

  it.live("never yielding → NotReached naming what was awaited, after the timeout", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        eventually("the lease released", Effect.void, {
          timeout: "100 millis",
          interval: "10 millis"
        })
      )
      expect(exit).toEqual(
        Exit.fail(new NotReached({ what: "the lease released", timeout: expect.anything() }))
      )
      if (Exit.isFailure(exit))
        expect(String(exit.cause)).toContain("the lease released: not reached in 100 ms")
    })
  )

  it.live("a failing attempt is the answer: not retried", () =>
    Effect.gen(function* () {
      const tries = yield* Ref.make(0)
      const exit = yield* Effect.exit(
        eventually(
          "x",
          Effect.zipRight(
            Ref.update(tries, (n) => n + 1),
            Effect.fail("boom")
          )
        )
      )
      expect(exit).toEqual(Exit.fail("boom"))
      expect(yield* Ref.get(tries)).toBe(1)
    })
  )

  it("the Promise form passes an attempt's rejection through unchanged", async () => {
    const error = new Error("the bridge went away")
    await expect(eventuallyAsync("x", () => Promise.reject(error))).rejects.toBe(error)
    await expect(eventuallyAsync("nothing", async () => undefined, 50)).rejects.toBeInstanceOf(NotReached)
  })
})
