/**
 * A turn's start (bridge-internals §8: starting, `task.started`, running) as the store sees it:
 * the event is committed in the move to `starting`, one transaction, so no reader ever sees a
 * started task without its event, and a task pays one commit less (issue 12). In process, the
 * real store wrapped to record which calls the flow makes.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { TaskStore, type TaskStoreShape } from "@serverfs/store"
import { Effect, Option } from "effect"
import { TaskService } from "../src/index.js"
import { makeSandbox, type Sandbox } from "./support/daemon.js"
import { inProcessBridge } from "./support/inProcess.js"
import { awaitStatus } from "./support/statusWait.js"

let sandbox: Sandbox | undefined

afterEach(() => {
  sandbox?.remove()
  sandbox = undefined
})

/** The real store, recording each transition (with the event it carries) and each event append. */
const recording =
  (calls: Array<string>) =>
  (real: TaskStoreShape): TaskStoreShape => ({
    ...real,
    transition: (taskId, to, patch, event) => {
      calls.push(event === undefined ? `transition ${to}` : `transition ${to} + ${event.eventType}`)
      return real.transition(taskId, to, patch, event)
    },
    appendEvent: (taskId, eventType, payload, limits) => {
      calls.push(`append ${eventType}`)
      return real.appendEvent(taskId, eventType, payload, limits)
    },
    appendEvents: (events, limits) => {
      calls.push(`append ${events.map((event) => event.eventType).join(",")}`)
      return real.appendEvents(events, limits)
    }
  })

describe("a turn's start", () => {
  it.scoped("commits task.started with the move to starting, then moves to running", () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    const calls: Array<string> = []
    const { layer } = inProcessBridge(sandbox.env(), undefined, undefined, {}, recording(calls))
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      const store = yield* TaskStore
      const { task_id } = yield* tasks.submit({
        runtime: "fake",
        workdir: "w1",
        path: "",
        profile: "review",
        prompt: "complete:done"
      })
      yield* awaitStatus(task_id, ["succeeded"])
      expect(calls.slice(0, 2)).toEqual(["transition starting + task.started", "transition running"])
      expect(calls.filter((call) => call.includes("task.started"))).toHaveLength(1)
      // One transaction: the event carries the start's own time.
      const task = Option.getOrThrow(yield* store.getTask(task_id))
      const started = (yield* store.readEvents(task_id, 0, 100)).filter(
        (e) => e.event_type === "task.started"
      )
      expect(started.map((e) => [e.created_at, e.payload])).toEqual([[task.started_at, { runtime: "fake" }]])
    }).pipe(Effect.provide(layer))
  })
})
