/**
 * The event writer (group commit) on the real store over a real SQLite file: per-task order
 * across concurrent producers, commits shared between them, `append` and `flush` meaning
 * "committed", refusals reported one by one, a failing batch that does not stop the writer,
 * and a scope close that commits everything still queued.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { type EventRefusal, type NewEvent, TaskStore, type TaskStoreShape } from "@serverfs/store"
import { Effect, Exit, Scope } from "effect"
import { makeEventWriter } from "../src/tasks/EventWriter.js"
import { plantTask } from "./support/store.js"

const LIMITS = { maxEventsPerTask: 10_000, maxEventBytes: 4096 }

let base = ""
let stateDir = ""
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-events-"))
  stateDir = path.join(base, "state")
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

const running = () =>
  plantTask(stateDir, { status: "running", workdirAlias: "wd", slot: 1, profile: "review" })

/** The real store, counting the batches it is given. */
const counting = (store: TaskStoreShape) => {
  const batches: number[] = []
  const shape: TaskStoreShape = {
    ...store,
    appendEvents: (events, limits) =>
      Effect.zipRight(
        Effect.sync(() => batches.push(events.length)),
        store.appendEvents(events, limits)
      )
  }
  return { shape, batches }
}

const quiet = {
  limits: LIMITS,
  onRefused: () => Effect.void,
  onFailure: () => Effect.void
}

const texts = (store: TaskStoreShape, taskId: string) =>
  Effect.map(store.readEvents(taskId, 0, 500), (events) =>
    events.map((e) => (e.payload as { text: string }).text)
  )

const withStore = <A, E>(body: (store: TaskStoreShape) => Effect.Effect<A, E, Scope.Scope>) =>
  Effect.scoped(Effect.provide(Effect.flatMap(TaskStore, body), TaskStore.layer({ stateDir })))

describe("event writer", () => {
  it.live("4 producers × 300 events: per-task order kept, far fewer commits than events", () =>
    Effect.gen(function* () {
      // One after another: plantTask opens its own connection, and two connections of one
      // process writing side by side deadlock (better-sqlite3 waits for a lock synchronously,
      // so the holder never gets the thread back to commit).
      const tasks: Array<string> = []
      for (let i = 0; i < 4; i++) tasks.push(yield* Effect.promise(running))
      yield* withStore((real) =>
        Effect.gen(function* () {
          const { shape, batches } = counting(real)
          const writer = yield* makeEventWriter(shape, quiet)
          yield* Effect.forEach(
            tasks,
            (taskId) =>
              Effect.forEach(
                Array.from({ length: 300 }, (_, i) => i),
                (i) => writer.enqueue({ taskId, eventType: "agent.message", payload: { text: `m${i}` } }),
                { discard: true }
              ),
            { concurrency: "unbounded", discard: true }
          )
          yield* writer.flush
          for (const taskId of tasks) {
            const read: string[] = []
            let after = 0
            for (;;) {
              const page = yield* real.readEvents(taskId, after, 500)
              if (page.length === 0) break
              read.push(...page.map((e) => (e.payload as { text: string }).text))
              after = page[page.length - 1]!.event_id
            }
            expect(read).toEqual(Array.from({ length: 300 }, (_, i) => `m${i}`))
          }
          const total = batches.reduce((a, b) => a + b, 0)
          expect(total).toBe(1200)
          // Producers never wait for a commit, so events accumulate while one is written.
          expect(batches.length).toBeLessThan(1200 / 4)
          expect(Math.max(...batches)).toBeLessThanOrEqual(512)
        })
      )
    })
  )

  it.live("append returns once its event is committed; flush once everything before it is", () =>
    Effect.gen(function* () {
      const taskId = yield* Effect.promise(running)
      yield* withStore((store) =>
        Effect.gen(function* () {
          const writer = yield* makeEventWriter(store, quiet)
          yield* writer.append({ taskId, eventType: "agent.message", payload: { text: "first" } })
          expect(yield* texts(store, taskId)).toEqual(["first"])
          for (let i = 0; i < 50; i++)
            yield* writer.enqueue({ taskId, eventType: "agent.message", payload: { text: `q${i}` } })
          yield* writer.flush
          const read = yield* texts(store, taskId)
          expect(read).toHaveLength(51)
          expect(read.at(-1)).toBe("q49")
        })
      )
    })
  )

  it.live("refused events are reported one by one and the rest of their batch is written", () =>
    Effect.gen(function* () {
      const taskId = yield* Effect.promise(running)
      const refused: Array<[NewEvent, EventRefusal["_tag"]]> = []
      yield* withStore((store) =>
        Effect.gen(function* () {
          const writer = yield* makeEventWriter(store, {
            ...quiet,
            limits: { maxEventsPerTask: 3, maxEventBytes: 200 },
            onRefused: (event, refusal) => Effect.sync(() => refused.push([event, refusal._tag]))
          })
          const gone = `agt_${"9".repeat(24)}`
          yield* writer.enqueue({ taskId, eventType: "agent.message", payload: { text: "a" } })
          yield* writer.enqueue({ taskId, eventType: "provider.error", payload: { blob: "z".repeat(300) } })
          yield* writer.enqueue({ taskId: gone, eventType: "agent.message", payload: { text: "?" } })
          for (const text of ["b", "c", "d"])
            yield* writer.enqueue({ taskId, eventType: "agent.message", payload: { text } })
          yield* writer.flush
          expect(yield* texts(store, taskId)).toEqual(["a", "b", "c"])
          expect(refused.map(([event, tag]) => [event.eventType, tag])).toEqual([
            ["provider.error", "AGENT_EVENT_TOO_LARGE"],
            ["agent.message", "AGENT_TASK_NOT_FOUND"],
            ["agent.message", "AGENT_EVENT_LIMIT_REACHED"]
          ])
        })
      )
    })
  )

  it.live("a batch the database cannot write is reported by its SQLite code; the next one is written", () =>
    Effect.gen(function* () {
      const taskId = yield* Effect.promise(running)
      const failures: Array<[number, string]> = []
      yield* withStore((real) =>
        Effect.gen(function* () {
          let calls = 0
          const failingOnce: TaskStoreShape = {
            ...real,
            appendEvents: (events, limits) =>
              calls++ === 0
                ? Effect.die(
                    Object.assign(new Error("Failed to execute statement"), {
                      cause: Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" })
                    })
                  )
                : real.appendEvents(events, limits)
          }
          const writer = yield* makeEventWriter(failingOnce, {
            ...quiet,
            onFailure: (count, code) => Effect.sync(() => failures.push([count, code]))
          })
          yield* writer.append({ taskId, eventType: "agent.message", payload: { text: "lost" } })
          yield* writer.append({ taskId, eventType: "agent.message", payload: { text: "kept" } })
          expect(failures).toEqual([[1, "SQLITE_FULL"]])
          expect(yield* texts(real, taskId)).toEqual(["kept"])
        })
      )
    })
  )

  it.live("closing the writer's scope commits every event still queued", () =>
    Effect.gen(function* () {
      const taskId = yield* Effect.promise(running)
      yield* withStore((store) =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          const writer = yield* Scope.extend(makeEventWriter(store, quiet), scope)
          for (let i = 0; i < 2000; i++)
            yield* writer.enqueue({ taskId, eventType: "agent.message", payload: { text: `m${i}` } })
          yield* Scope.close(scope, Exit.void)
          const count = yield* Effect.map(store.getTask(taskId), (t) =>
            t._tag === "Some" ? t.value.event_count : -1
          )
          expect(count).toBe(2000)
        })
      )
    })
  )
})
