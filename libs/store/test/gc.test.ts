/**
 * Retention GC (spec v0.7 §2.2, bridge-internals §3): a terminal task older than the retention
 * goes as a whole unit — spool file first, then the row with its events and requests — while
 * non-terminal, protected and recent terminal tasks stay.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { ResultSpool, TaskStore } from "../src/index.js"
import {
  eventLimits,
  insertQueued,
  insertRunning,
  interaction,
  rawRows,
  scopedTempState,
  type TempState,
  withRawSql,
  withStore
} from "./helpers.js"

const HOUR = 3600
const RETENTION = 168 * HOUR

/** A finished task with events, a (staled) request and a spooled result. */
const finishedTask = (to: "succeeded" | "failed" | "cancelled" | "interrupted") =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const spool = yield* ResultSpool
    const taskId = yield* insertRunning()
    yield* store.appendEvent(taskId, "turn.started", {}, eventLimits)
    const { request } = yield* store.createPendingRequest(
      taskId,
      "question",
      { questions: [] },
      "2100-01-01T00:00:00Z",
      interaction
    )
    if (to === "succeeded" || to === "failed")
      yield* store.resolveRequest(taskId, request.request_id, { answers: [] })
    const written = yield* spool.writeResult(taskId, `result of ${taskId}`)
    yield* store.transition(taskId, to, {
      result_storage: "spool",
      result_size_bytes: written.size_bytes,
      result_sha256: written.sha256
    })
    yield* store.appendEvent(taskId, `task.${to}`, {}, eventLimits)
    return { taskId, requestId: request.request_id }
  })

const rowCounts = (temp: TempState, taskId: string) =>
  withRawSql(
    temp.stateDir,
    Effect.map(
      Effect.all([
        rawRows(`SELECT COUNT(*) AS n FROM tasks WHERE task_id = '${taskId}'`),
        rawRows(`SELECT COUNT(*) AS n FROM events WHERE task_id = '${taskId}'`),
        rawRows(`SELECT COUNT(*) AS n FROM pending_requests WHERE task_id = '${taskId}'`)
      ]),
      (results) => results.map((rows) => Number(rows[0]?.n))
    )
  )

const resultFile = (temp: TempState, taskId: string) => path.join(temp.stateDir, "results", `${taskId}.txt`)

describe("gc", () => {
  it.scoped("removes an expired terminal task whole; keeps non-terminal, protected and recent ones", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const old = yield* finishedTask("succeeded")
          const oldCancelled = yield* finishedTask("cancelled")
          const guarded = yield* finishedTask("interrupted")
          const queued = yield* insertQueued()
          const waiting = yield* insertRunning()
          yield* store.createPendingRequest(
            waiting,
            "approval",
            { title: "x" },
            "2100-01-01T00:00:00Z",
            interaction
          )
          expect(yield* rowCounts(temp, old.taskId)).toEqual([1, 2, 1])
          expect(fs.existsSync(resultFile(temp, old.taskId))).toBe(true)

          // Just inside the retention: nothing goes (completed_at < now − retention is strict).
          yield* TestClock.adjust(`${RETENTION} seconds`)
          expect(yield* store.gc({ retentionSeconds: RETENTION })).toEqual([])
          const recent = yield* finishedTask("failed")

          yield* TestClock.adjust("1 second")
          const deleted = yield* store.gc({ retentionSeconds: RETENTION, protectedTaskIds: [guarded.taskId] })
          expect([...deleted].sort()).toEqual([old.taskId, oldCancelled.taskId].sort())

          for (const gone of [old, oldCancelled]) {
            expect(yield* rowCounts(temp, gone.taskId)).toEqual([0, 0, 0])
            expect(fs.existsSync(resultFile(temp, gone.taskId))).toBe(false)
            expect(yield* store.getTask(gone.taskId)).toEqual(Option.none())
            expect(yield* store.getPendingRequest(gone.requestId)).toEqual(Option.none())
          }
          for (const kept of [guarded.taskId, recent.taskId, queued, waiting]) {
            expect(Option.isSome(yield* store.getTask(kept))).toBe(true)
          }
          expect(fs.existsSync(resultFile(temp, guarded.taskId))).toBe(true)
          expect(fs.existsSync(resultFile(temp, recent.taskId))).toBe(true)

          // Years later the non-terminal tasks are still never touched; the unprotected rest goes.
          const later = yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: RETENTION })
          expect([...later].sort()).toEqual([guarded.taskId, recent.taskId].sort())
          expect((yield* store.listNonTerminal()).map((t) => t.task_id).sort()).toEqual(
            [queued, waiting].sort()
          )
        })
      )
    )
  )

  it.scoped("the spool file goes first: if it cannot be removed, the task row stays for a later GC", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const { taskId } = yield* finishedTask("succeeded")
          const results = path.join(temp.stateDir, "results")
          fs.chmodSync(results, 0o755)
          expect(yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: 0 })).toEqual([])
          expect(yield* rowCounts(temp, taskId)).toEqual([1, 2, 1])
          expect(fs.existsSync(resultFile(temp, taskId))).toBe(true)
          fs.chmodSync(results, 0o700)
          expect(yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: 0 })).toEqual([taskId])
          expect(yield* rowCounts(temp, taskId)).toEqual([0, 0, 0])
          expect(fs.existsSync(resultFile(temp, taskId))).toBe(false)
        })
      )
    )
  )

  it.scoped("a terminal task without a spool file (inline result) is collected too", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertQueued()
          yield* store.transition(taskId, "cancelled")
          expect(yield* store.listTerminalTaskIdsOlderThan("2200-01-01T00:00:00Z")).toEqual([taskId])
          expect(yield* store.gc({ now: "2200-01-01T00:00:00Z", retentionSeconds: 0 })).toEqual([taskId])
          expect(yield* store.getTask(taskId)).toEqual(Option.none())
        })
      )
    )
  )
})

/** A finished task holding `resultBytes` spooled and `events` events of about 1 KiB each. */
const heavyTask = (resultBytes: number, events: number) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const spool = yield* ResultSpool
    const taskId = yield* insertRunning()
    for (let i = 0; i < events; i++)
      yield* store.appendEvent(taskId, "agent.message", { text: "x".repeat(1000) }, eventLimits)
    const written = yield* spool.writeResult(taskId, "r".repeat(resultBytes))
    yield* store.transition(taskId, "succeeded", {
      result_storage: "spool",
      result_size_bytes: written.size_bytes,
      result_sha256: written.sha256
    })
    // Distinct completion times: eviction order is completion order.
    yield* TestClock.adjust("1 second")
    return taskId
  })

describe("disk budget", () => {
  it.scoped(
    "usage is events + results from one aggregate; eviction goes oldest finished first, never an active or protected task, and stops under budget",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            expect((yield* store.storageUsage()).totalBytes).toBe(0)
            const first = yield* heavyTask(100_000, 10)
            const one = (yield* store.storageUsage()).totalBytes
            // 10 events of ~1 KiB, 100,000 result bytes, the spooled result's preview allowance.
            expect(one).toBeGreaterThan(100_000 + 10 * 1000 + 65_536)
            expect(one).toBeLessThan(100_000 + 10 * 1200 + 65_536)
            const protectedTask = yield* heavyTask(100_000, 10)
            const second = yield* heavyTask(100_000, 10)
            const third = yield* heavyTask(100_000, 10)
            const running = yield* insertRunning()
            for (let i = 0; i < 50; i++)
              yield* store.appendEvent(running, "agent.message", { text: "y".repeat(1000) }, eventLimits)
            const total = (yield* store.storageUsage()).totalBytes
            expect(total).toBeGreaterThan(4 * one + 50_000)

            // Within budget: nothing goes.
            expect((yield* store.evictForBudget({ budgetBytes: total, reserveBytes: 0 })).evicted).toEqual([])
            // Room for two finished tasks less: the two oldest unprotected go, in completion order.
            const outcome = yield* store.evictForBudget({
              budgetBytes: total - one,
              reserveBytes: one,
              protectedTaskIds: [protectedTask]
            })
            expect(outcome.evicted).toEqual([first, second])
            expect(outcome.usageBytes).toBe(total - 2 * one)
            expect(outcome.usageBytes).toBe((yield* store.storageUsage()).totalBytes)
            for (const gone of [first, second]) {
              expect(yield* rowCounts(temp, gone)).toEqual([0, 0, 0])
              expect(fs.existsSync(resultFile(temp, gone))).toBe(false)
            }
            // A budget the active and protected tasks alone exceed: everything else goes, they stay.
            const tight = yield* store.evictForBudget({
              budgetBytes: 1,
              reserveBytes: 0,
              protectedTaskIds: [protectedTask]
            })
            expect(tight.evicted).toEqual([third])
            expect(tight.usageBytes).toBeGreaterThan(1)
            expect(Option.isSome(yield* store.getTask(running))).toBe(true)
            expect(Option.isSome(yield* store.getTask(protectedTask))).toBe(true)
          })
        )
      )
  )

  it.scoped(
    "a task's events stop at its storage share → AGENT_EVENT_LIMIT_REACHED, counted for the budget",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const taskId = yield* insertRunning()
            const limits = { ...eventLimits, maxStoredBytesPerTask: 10_000 }
            const outcomes: Array<string> = []
            for (let i = 0; i < 12; i++) {
              const exit = yield* Effect.either(
                store.appendEvent(taskId, "agent.message", { text: "z".repeat(1000) }, limits)
              )
              outcomes.push(exit._tag === "Right" ? "ok" : exit.left._tag)
            }
            const accepted = outcomes.filter((o) => o === "ok").length
            expect(accepted).toBeGreaterThanOrEqual(8)
            expect(outcomes.slice(accepted)).toEqual(Array(12 - accepted).fill("AGENT_EVENT_LIMIT_REACHED"))
            expect((yield* store.storageUsage()).totalBytes).toBeLessThanOrEqual(10_000)
          })
        )
      )
  )
})
