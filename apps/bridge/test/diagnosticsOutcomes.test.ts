/**
 * The bounded outcomes the seams classify once from an exit (spec v0.22 §5.3, §9.1): a lease
 * acquisition's and an RPC call's. Against an independent table, not the code's own branches.
 */
import { LockPathUnsafe, WorkdirBusy, WorkdirRecoveryRequired } from "@serverfs/domain"
import { Exit, FiberId } from "effect"
import { describe, expect, it } from "vitest"
import { leaseOutcomeOf, rpcOutcomeOf } from "../src/diagnostics/Outcomes.js"

const busy = new WorkdirBusy({ workdir: "w1" })
const guarded = new WorkdirRecoveryRequired({ workdir: "w1" })
const unsafe = new LockPathUnsafe({ message: "lock directory is a symlink" })
// Shaped like a frozen error, but not an instance of its class: never taken for one.
const lookalike = { _tag: "WORKDIR_BUSY", workdir: "w1" }

describe("leaseOutcomeOf", () => {
  it.each([
    ["success", Exit.succeed(undefined), "acquired"],
    ["WORKDIR_BUSY", Exit.fail(busy), "busy"],
    ["WORKDIR_RECOVERY_REQUIRED", Exit.fail(guarded), "recovery_required"],
    ["another frozen error", Exit.fail(unsafe), "failure"],
    ["a look-alike object", Exit.fail(lookalike), "failure"],
    ["a defect", Exit.die(new Error("boom")), "failure"],
    ["an interruption", Exit.interrupt(FiberId.none), "failure"]
  ] as const)("%s → %s", (_, exit, expected) => {
    expect(leaseOutcomeOf(exit as Exit.Exit<unknown, unknown>)).toBe(expected)
  })
})

describe("rpcOutcomeOf", () => {
  it.each([
    ["success", Exit.succeed({}), "ok"],
    ["a frozen error", Exit.fail(busy), "WORKDIR_BUSY"],
    ["another frozen error", Exit.fail(unsafe), "LOCK_PATH_UNSAFE"],
    ["a look-alike object", Exit.fail(lookalike), "fault"],
    ["a defect", Exit.die("boom"), "fault"]
  ] as const)("%s → %s", (_, exit, expected) => {
    expect(rpcOutcomeOf(exit as Exit.Exit<unknown, unknown>)).toBe(expected)
  })
})
