/**
 * The spec v0.3 §23 limits are settings (SERVERFS_AGENT_MAX_PROMPT_BYTES, …_FINAL_RESPONSE_BYTES,
 * …_EVENT_BYTES, …_EVENTS_PER_TASK): the bridge's own service graph in this process, configured
 * far below the defaults, enforces the configured values and records them in the manifest.
 * (The defaults themselves are exercised through the daemon in limits.test.ts.)
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { TaskService } from "../src/index.js"
import { makeSandbox, type Sandbox, TERMINAL } from "./support/daemon.js"
import { inProcessBridge } from "./support/inProcess.js"
import { awaitStatus } from "./support/statusWait.js"

let sandbox: Sandbox | undefined

afterEach(() => {
  sandbox?.remove()
  sandbox = undefined
})

describe("configured §23 limits", () => {
  it.scoped("prompt, final response, event size and event count follow the settings", () => {
    const box = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    sandbox = box
    const { layer } = inProcessBridge(
      box.env({
        SERVERFS_AGENT_MAX_PROMPT_BYTES: "8000",
        SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES: "1000",
        SERVERFS_AGENT_MAX_EVENT_BYTES: "4096",
        SERVERFS_AGENT_MAX_EVENTS_PER_TASK: "100"
      })
    )
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      const submit = (prompt: string) =>
        tasks.submit({ runtime: "fake", workdir: "w1", path: "", profile: "review", prompt })
      const finished = (taskId: string) => awaitStatus(taskId, TERMINAL)

      // The prompt: 8000 bytes pass, 8001 → AGENT_PROMPT_TOO_LARGE naming the configured size.
      const head = "say:"
      const fits = yield* submit(head + "x".repeat(8000 - head.length))
      expect((yield* finished(fits.task_id)).status).toBe("succeeded")
      const over = yield* Effect.either(submit(head + "x".repeat(8001 - head.length)))
      expect(Either.isLeft(over) && over.left._tag).toBe("AGENT_PROMPT_TOO_LARGE")
      expect(Either.isLeft(over) && over.left.message).toBe("the prompt exceeds 8000 bytes")

      // The manifest records the configured values.
      const view = yield* tasks.get(fits.task_id)
      expect(view.manifest.limits).toMatchObject({
        max_prompt_bytes: 8000,
        max_event_bytes: 4096,
        max_events_per_task: 100
      })

      // The final response: 1000 bytes are kept, 1001 fail the task.
      const atCap = yield* finished((yield* submit("large:1000")).task_id)
      expect(atCap.status).toBe("succeeded")
      const pastCap = yield* finished((yield* submit("large:1001")).task_id)
      expect(pastCap).toMatchObject({
        status: "failed",
        error_code: "AGENT_RESULT_TOO_LARGE",
        error_message: "the final response exceeds 1000 bytes"
      })

      // Events: the 7996-byte agent.message was shortened to the configured size; past 100
      // events the rest are dropped and the task still ends.
      const said = (yield* tasks.events(fits.task_id, 0, 500)).events.find(
        (e) => e.event_type === "agent.message"
      )
      expect(said).toBeDefined()
      const saidBytes = Buffer.byteLength(JSON.stringify(said?.payload))
      expect(saidBytes).toBeLessThanOrEqual(4096)
      expect(saidBytes).toBeGreaterThan(1000)
      const chatty = yield* submit("events:150\ncomplete:done")
      expect((yield* finished(chatty.task_id)).status).toBe("succeeded")
      const events = yield* tasks.events(chatty.task_id, 0, 500)
      expect(events.events.length).toBe(100)
    }).pipe(Effect.provide(layer))
  })
})
