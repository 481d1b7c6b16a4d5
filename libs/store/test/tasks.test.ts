/**
 * Inserting tasks (bridge-internals §3, §5, §6 submit step 13): the row as submitted, the
 * active-task cap counted in the database, unique task ids and idempotency keys.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, TestClock } from "effect"
import { TaskStore } from "../src/index.js"
import { failureTag, insertQueued, newTask, scopedTempState, withStore } from "./helpers.js"

describe("insertTask", () => {
  it.scoped("stores a queued task with Clock times, nulls for what comes later, and returns it", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          yield* TestClock.adjust("90 seconds")
          const input = yield* newTask({
            correlation_id: "corr",
            idempotency_key: "idem",
            continue_from_task_id: `agt_${"a".repeat(24)}`,
            requested_model: "gpt-x",
            deadline_at: "1970-01-01T02:01:30Z"
          })
          const record = yield* store.insertTask(input, { maxActiveTasks: 4 })
          expect(record).toMatchObject({
            task_id: input.task_id,
            runtime: "fake",
            workdir_alias: "wd",
            workdir_slot: 1,
            relative_cwd: ".",
            profile: "review",
            status: "queued",
            created_at: "1970-01-01T00:01:30.000Z",
            updated_at: "1970-01-01T00:01:30.000Z",
            started_at: null,
            completed_at: null,
            deadline_at: "1970-01-01T02:01:30.000Z",
            continue_from_task_id: `agt_${"a".repeat(24)}`,
            correlation_id: "corr",
            idempotency_key: "idem",
            request_fingerprint: input.request_fingerprint,
            requested_model: "gpt-x",
            native_session_id: null,
            native_turn_id: null,
            final_response: null,
            result_storage: null,
            result_size_bytes: null,
            result_sha256: null,
            error_code: null,
            error_message: null,
            pending_request_id: null,
            event_count: 0
          })
          expect(yield* store.getTask(input.task_id)).toEqual(Option.some(record))
          expect(yield* store.getTask(`agt_${"b".repeat(24)}`)).toEqual(Option.none())
        })
      )
    )
  )

  it.scoped("a task id that is not agt_ + 24 hex is a defect (ids are generated, never user input)", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const input = yield* newTask({ task_id: "agt_../../etc" })
          const exit = yield* Effect.exit(store.insertTask(input, { maxActiveTasks: 4 }))
          expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
          expect(yield* store.listNonTerminal()).toEqual([])
        })
      )
    )
  )

  it.scoped("a task id already stored → AGENT_TASK_EXISTS", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const input = yield* newTask()
          yield* store.insertTask(input, { maxActiveTasks: 4 })
          const exit = yield* Effect.exit(
            store.insertTask({ ...input, runtime: "codex" }, { maxActiveTasks: 4 })
          )
          expect(failureTag(exit)).toBe("AGENT_TASK_EXISTS")
          expect(Option.map(yield* store.getTask(input.task_id), (t) => t.runtime)).toEqual(
            Option.some("fake")
          )
        })
      )
    )
  )

  it.scoped(
    "an idempotency key is unique across tasks → AGENT_IDEMPOTENCY_CONFLICT; null keys never collide",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const first = yield* newTask({ idempotency_key: "key-1" })
            yield* store.insertTask(first, { maxActiveTasks: 10 })
            const clash = yield* newTask({ idempotency_key: "key-1" })
            expect(failureTag(yield* Effect.exit(store.insertTask(clash, { maxActiveTasks: 10 })))).toBe(
              "AGENT_IDEMPOTENCY_CONFLICT"
            )
            expect(yield* store.getTask(clash.task_id)).toEqual(Option.none())
            // Even after the first task ended, the key stays taken (idempotency outlives the run).
            yield* store.transition(first.task_id, "cancelled")
            expect(failureTag(yield* Effect.exit(store.insertTask(clash, { maxActiveTasks: 10 })))).toBe(
              "AGENT_IDEMPOTENCY_CONFLICT"
            )
            for (let i = 0; i < 3; i++) yield* insertQueued({ idempotency_key: null })
            expect(Option.map(yield* store.findByIdempotencyKey("key-1"), (t) => t.task_id)).toEqual(
              Option.some(first.task_id)
            )
            expect(yield* store.findByIdempotencyKey("key-2")).toEqual(Option.none())
          })
        )
      )
  )

  it.scoped("the active-task cap counts non-terminal tasks in the database → AGENT_TASK_LIMIT_REACHED", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const cap = { maxActiveTasks: 3 }
        const ids = yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const a = yield* newTask()
            const b = yield* newTask()
            const c = yield* newTask()
            yield* store.insertTask(a, cap)
            yield* store.insertTask(b, cap)
            yield* store.transition(b.task_id, "starting")
            yield* store.insertTask(c, cap)
            yield* store.transition(c.task_id, "starting")
            yield* store.transition(c.task_id, "running")
            yield* store.createPendingRequest(c.task_id, "approval", { title: "t" }, "2100-01-01T00:00:00Z", {
              maxInteractionBytes: 1000
            })
            const over = yield* newTask()
            expect(failureTag(yield* Effect.exit(store.insertTask(over, cap)))).toBe(
              "AGENT_TASK_LIMIT_REACHED"
            )
            expect(yield* store.getTask(over.task_id)).toEqual(Option.none())
            return [a.task_id, b.task_id, c.task_id]
          })
        )
        // A new process (a restarted bridge) sees the same count: it lives in the database.
        yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            expect((yield* store.listNonTerminal()).map((t) => t.task_id).sort()).toEqual([...ids].sort())
            const over = yield* newTask()
            expect(failureTag(yield* Effect.exit(store.insertTask(over, cap)))).toBe(
              "AGENT_TASK_LIMIT_REACHED"
            )
            // Any terminal transition frees a slot.
            yield* store.transition(ids[0] ?? "", "interrupted", { error_code: "BRIDGE_RESTARTED" })
            yield* store.insertTask(over, cap)
            const again = yield* newTask()
            expect(failureTag(yield* Effect.exit(store.insertTask(again, cap)))).toBe(
              "AGENT_TASK_LIMIT_REACHED"
            )
          })
        )
      })
    )
  )

  it.scoped("concurrent submits cannot overshoot the cap", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const inputs = yield* Effect.all(Array.from({ length: 12 }, () => newTask()))
          const outcomes = yield* Effect.all(
            inputs.map((input) => Effect.either(store.insertTask(input, { maxActiveTasks: 4 }))),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o._tag === "Right")).toHaveLength(4)
          expect(
            outcomes.filter((o) => o._tag === "Left" && o.left._tag === "AGENT_TASK_LIMIT_REACHED")
          ).toHaveLength(8)
          expect(yield* store.listNonTerminal()).toHaveLength(4)
        })
      )
    )
  )

  it.scoped("listNonTerminal lists queued, starting, running and waiting tasks oldest first", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const ids: Array<string> = []
          for (let i = 0; i < 4; i++) {
            yield* TestClock.adjust("1 second")
            ids.push(yield* insertQueued())
          }
          yield* store.transition(ids[1] ?? "", "cancelled")
          yield* store.transition(ids[2] ?? "", "starting")
          expect((yield* store.listNonTerminal()).map((t) => t.task_id)).toEqual([ids[0], ids[2], ids[3]])
        })
      )
    )
  )
})
