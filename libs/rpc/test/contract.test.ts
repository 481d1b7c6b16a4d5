/**
 * The contract's types, checked by the compiler (`npx tsc -b`): a handler table must have one
 * handler per method, each getting its method's decoded params and failing only with its
 * method's frozen errors. The `@ts-expect-error` lines fail the type check if the contract ever
 * stops refusing them. At run time: the table dispatches by method.
 */
import { describe, expect, it } from "@effect/vitest"
import { AgentDisabled, AgentTaskNotFound, type TaskId, taskId, WorkdirBusy } from "@serverfs/domain"
import { Effect } from "effect"
import { type BridgeHandlers, handlerOf } from "../src/index.js"
import { SAMPLE_RESULTS } from "./fixtures.js"

const handlers: BridgeHandlers = {
  "runtime.list": () => Effect.succeed(SAMPLE_RESULTS["runtime.list"]),
  "runtime.models": () => Effect.succeed(SAMPLE_RESULTS["runtime.models"]),
  "task.submit": () => Effect.fail(new WorkdirBusy({ workdir: "wd" })),
  "task.get": (p) => {
    const id: TaskId = p.task_id
    return id === "agt_missing"
      ? Effect.fail(new AgentTaskNotFound({ message: "no such task" }))
      : Effect.succeed(SAMPLE_RESULTS["task.get"])
  },
  "task.events": () => Effect.succeed(SAMPLE_RESULTS["task.events"]),
  "task.result.read": () => Effect.succeed(SAMPLE_RESULTS["task.result.read"]),
  "task.approval.respond": () => Effect.succeed(SAMPLE_RESULTS["task.approval.respond"]),
  "task.question.answer": () => Effect.succeed(SAMPLE_RESULTS["task.question.answer"]),
  "task.message.send": () => Effect.succeed(SAMPLE_RESULTS["task.message.send"]),
  "task.cancel": () => Effect.succeed(SAMPLE_RESULTS["task.cancel"]),
  "task.list": () => Effect.succeed(SAMPLE_RESULTS["task.list"]),
  "lease.list": () => Effect.succeed(SAMPLE_RESULTS["lease.list"]),
  "lease.recover": () => Effect.succeed(SAMPLE_RESULTS["lease.recover"]),
  "diagnostics.snapshot": () => Effect.succeed(SAMPLE_RESULTS["diagnostics.snapshot"]),
  "diagnostics.task": () => Effect.succeed(SAMPLE_RESULTS["diagnostics.task"]),
  "metrics.snapshot": () => Effect.succeed(SAMPLE_RESULTS["metrics.snapshot"])
}

// task.get may not fail with a code outside its contract
export const outsideContract: BridgeHandlers["task.get"] = () =>
  // @effect-diagnostics-next-line missingEffectError:off
  // @ts-expect-error AGENT_DISABLED is not among task.get's errors
  Effect.fail(new AgentDisabled({ message: "x" }))
// runtime.list fails with nothing at all
export const listFails: BridgeHandlers["runtime.list"] = () =>
  // @effect-diagnostics-next-line missingEffectError:off
  // @ts-expect-error runtime.list has no errors
  Effect.fail(new AgentTaskNotFound({ message: "x" }))
// @ts-expect-error a handler's result is its method's result
export const wrongResult: BridgeHandlers["runtime.list"] = () => Effect.succeed(SAMPLE_RESULTS["task.cancel"])
// @ts-expect-error a plain string is not a decoded task id
export const plainId: TaskId = "agt_1"

describe("the handler table", () => {
  it.effect("dispatches each method to its own handler, failures typed by method", () =>
    Effect.gen(function* () {
      const handle = handlerOf(handlers)
      expect(yield* handle("task.cancel", { task_id: taskId("agt_1") })).toEqual(
        SAMPLE_RESULTS["task.cancel"]
      )
      const failure = yield* Effect.flip(handle("task.get", { task_id: taskId("agt_missing") }))
      expect(failure).toBeInstanceOf(AgentTaskNotFound)
    })
  )
})
