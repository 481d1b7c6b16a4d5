import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FiberId } from "effect"
import { vi } from "vitest"
import { ConfigurationError } from "../src/ConfigurationError.js"
import {
  EXIT_CONFIGURATION,
  EXIT_FAILURE,
  EXIT_OK,
  exitTeardown,
  type ProgramExit,
  withExitCode
} from "../src/ProgramExit.js"

/** The one exit-code mapping of serverfs-mcp, serverfs-bridge and serverfs (the CLI). */

const server: ProgramExit = {
  auditConfigurationErrors: true,
  exitOnSuccess: false,
  interruptedExitCode: 0,
  otherFailure: () => "ServerFS: failed\n"
}
const cli: ProgramExit = { auditConfigurationErrors: false, exitOnSuccess: false, interruptedExitCode: 1 }

/** What a program wrote on stderr, and its exit code. */
const run = (program: Effect.Effect<unknown, unknown>, policy: ProgramExit) =>
  Effect.gen(function* () {
    const written: Array<string> = []
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const code = yield* withExitCode(program, policy).pipe(
      Effect.ensuring(Effect.sync(() => spy.mockRestore()))
    )
    return { code, written }
  })

describe("withExitCode", () => {
  it.effect("success → 0, nothing written", () =>
    Effect.gen(function* () {
      expect(yield* run(Effect.void, server)).toEqual({ code: EXIT_OK, written: [] })
    })
  )

  it.effect(
    "a configuration error → 2, the one human line and (servers) the startup_failed line stamped by the Clock",
    () =>
      Effect.gen(function* () {
        const error = new ConfigurationError({ variable: "WORKDIR_01_PATH", problem: "must be absolute" })
        const { code, written } = yield* run(Effect.fail(error), server)
        expect(code).toBe(EXIT_CONFIGURATION)
        expect(written).toEqual([
          "ServerFS: configuration error: WORKDIR_01_PATH: must be absolute\n",
          `${JSON.stringify({
            timestamp: "1970-01-01T00:00:00.000Z",
            level: "ERROR",
            event: "startup_failed",
            reason: "configuration error",
            variable: "WORKDIR_01_PATH"
          })}\n`
        ])
        // The CLI prints only the human line.
        expect((yield* run(Effect.fail(error), cli)).written).toEqual([
          "ServerFS: configuration error: WORKDIR_01_PATH: must be absolute\n"
        ])
      })
  )

  it.effect("any other failure or defect → 1 with the program's own line (none for the CLI)", () =>
    Effect.gen(function* () {
      expect(yield* run(Effect.fail("boom"), server)).toEqual({
        code: EXIT_FAILURE,
        written: ["ServerFS: failed\n"]
      })
      expect(yield* run(Effect.die(new Error("bug")), server)).toEqual({
        code: EXIT_FAILURE,
        written: ["ServerFS: failed\n"]
      })
      expect(yield* run(Effect.fail("boom"), cli)).toEqual({ code: EXIT_FAILURE, written: [] })
    })
  )
})

describe("exitTeardown", () => {
  const codeOf = (exit: Exit.Exit<unknown, unknown>, policy: ProgramExit) => {
    let code: number | undefined
    exitTeardown(policy)(exit, (c) => {
      code = c
    })
    return code
  }

  it("hands the program's code on; a signal's interruption is the policy's code (0 servers, 1 CLI)", () => {
    expect(codeOf(Exit.succeed(2), server)).toBe(2)
    expect(codeOf(Exit.succeed(0), cli)).toBe(0)
    expect(codeOf(Exit.interrupt(FiberId.none), server)).toBe(0)
    expect(codeOf(Exit.interrupt(FiberId.none), cli)).toBe(1)
  })
})
