/**
 * The store changes a status only through the domain table (bridge-internals §6): every
 * allowed pair is accepted, every other one of the 81 is refused with INVALID_TASK_TRANSITION
 * and leaves the database exactly as it was; terminal transitions stamp completed_at, clear
 * pending_request_id and stale the open request in the same transaction.
 */
import { describe, expect, it } from "@effect/vitest"
import { allowedTransitions, TaskStatus } from "@serverfs/domain"
import { Effect, Exit, Option, TestClock } from "effect"
import { type TaskRecord, TaskStore, type TransitionPatch } from "../src/index.js"
import {
  eventLimits,
  failureTag,
  insertQueued,
  insertRunning,
  interaction,
  scopedTempState,
  withStore
} from "./helpers.js"

type Status = typeof TaskStatus.Type

/** The table as bridge-internals §6 states it, written out independently of the domain code. */
const EXPECTED: Record<Status, ReadonlyArray<Status>> = {
  queued: ["starting", "cancelled", "interrupted"],
  starting: ["running", "failed", "cancelled", "interrupted"],
  running: [
    "waiting_for_approval",
    "waiting_for_question",
    "succeeded",
    "failed",
    "cancelled",
    "interrupted"
  ],
  waiting_for_approval: ["running", "cancelled", "interrupted"],
  waiting_for_question: ["running", "cancelled", "interrupted"],
  succeeded: [],
  failed: [],
  cancelled: [],
  interrupted: []
}
const TERMINAL: ReadonlyArray<Status> = ["succeeded", "failed", "cancelled", "interrupted"]
const STATUSES = TaskStatus.literals

/** Drives a new task to `status` through the store's own operations; returns its open request, if any. */
const taskIn = (status: Status) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const path: Record<Status, ReadonlyArray<Status>> = {
      queued: [],
      starting: ["starting"],
      running: ["starting", "running"],
      waiting_for_approval: ["starting", "running"],
      waiting_for_question: ["starting", "running"],
      succeeded: ["starting", "running", "succeeded"],
      failed: ["starting", "failed"],
      cancelled: ["cancelled"],
      interrupted: ["starting", "running", "interrupted"]
    }
    const taskId = yield* insertQueued()
    for (const step of path[status]) yield* store.transition(taskId, step)
    let requestId: string | null = null
    if (status === "waiting_for_approval" || status === "waiting_for_question") {
      const created = yield* store.createPendingRequest(
        taskId,
        status === "waiting_for_approval" ? "approval" : "question",
        { title: "t" },
        "2099-01-01T00:00:00.000Z",
        interaction
      )
      requestId = created.request.request_id
    }
    yield* store.appendEvent(taskId, "turn.started", {}, eventLimits)
    return { taskId, requestId }
  })

const snapshot = (taskId: string, requestId: string | null) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    return {
      task: yield* store.getTask(taskId),
      events: yield* store.readEvents(taskId, 0, 500),
      request: requestId === null ? Option.none() : yield* store.getPendingRequest(requestId),
      nonTerminal: (yield* store.listNonTerminal()).map((t) => t.task_id)
    }
  })

describe("the transition table", () => {
  it("the domain table is the one bridge-internals §6 states (19 allowed pairs)", () => {
    const expected = STATUSES.flatMap((from) => EXPECTED[from].map((to) => `${from}->${to}`)).sort()
    expect(
      allowedTransitions()
        .map(([from, to]) => `${from}->${to}`)
        .sort()
    ).toEqual(expected)
    expect(expected).toHaveLength(19)
  })

  /**
   * Every pair from a task driven there by the store's own operations. Without a patch, a move
   * that changes only the status takes the store's one-statement path (TaskRows.ts); with one,
   * the transaction: both must give the same outcomes.
   */
  const allPairs = (patch: TransitionPatch) =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          let accepted = 0
          let refused = 0
          for (const from of STATUSES) {
            for (const to of STATUSES) {
              const { taskId, requestId } = yield* taskIn(from)
              const before = yield* snapshot(taskId, requestId)
              // Time moves on, so any write would show in updated_at.
              yield* TestClock.adjust("1 second")
              const exit = yield* Effect.exit(store.transition(taskId, to, patch))
              const label = `${from} -> ${to}`
              if (EXPECTED[from].includes(to)) {
                accepted++
                expect(Exit.isSuccess(exit), label).toBe(true)
                if (!Exit.isSuccess(exit)) continue
                const { task, staledRequestId } = exit.value
                expect(task.status, label).toBe(to)
                expect(task.error_code, label).toBe(patch.error_code ?? null)
                const beforeTask = Option.getOrThrow(before.task)
                expect(task.updated_at > beforeTask.updated_at, label).toBe(true)
                expect(task.started_at, label).toBe(
                  to === "starting" && beforeTask.started_at === null
                    ? task.updated_at
                    : beforeTask.started_at
                )
                const terminal = TERMINAL.includes(to)
                expect(task.completed_at !== null, label).toBe(terminal)
                if (terminal) expect(task.completed_at, label).toBe(task.updated_at)
                expect(task.pending_request_id, label).toBe(
                  requestId !== null && !terminal && to !== "running" ? requestId : null
                )
                // Nothing else about the task moved, and the returned row is the stored one.
                const unchanged = (t: TaskRecord) => {
                  const {
                    status: _s,
                    updated_at: _u,
                    started_at: _st,
                    completed_at: _c,
                    pending_request_id: _p,
                    error_code: _e,
                    error_message: _m,
                    ...rest
                  } = t
                  return rest
                }
                expect(unchanged(task), label).toEqual(unchanged(beforeTask))
                expect(yield* store.getTask(taskId), label).toEqual(Option.some(task))
                if (requestId !== null) {
                  // Leaving a wait (terminal or not) closes the interaction in the same transaction.
                  expect(staledRequestId, label).toEqual(Option.some(requestId))
                  const request = Option.getOrThrow(yield* store.getPendingRequest(requestId))
                  expect(request.status, label).toBe("stale")
                } else {
                  expect(staledRequestId, label).toEqual(Option.none())
                }
                expect(
                  (yield* store.listNonTerminal()).some((t) => t.task_id === taskId),
                  label
                ).toBe(!terminal)
              } else {
                refused++
                expect(failureTag(exit), label).toBe("INVALID_TASK_TRANSITION")
                expect(yield* snapshot(taskId, requestId), label).toEqual(before)
              }
            }
          }
          expect([accepted, refused]).toEqual([19, 62])
        })
      )
    )

  it.scoped("all 81 pairs: allowed ones applied, the rest refused with the database unchanged", () =>
    allPairs({ error_code: "AGENT_PROVIDER_ERROR", error_message: "m" })
  )

  it.scoped("all 81 pairs without a patch: the same, a move of the status alone in one statement", () =>
    allPairs({})
  )
})

describe("transition details", () => {
  it.scoped("an unknown task → AGENT_TASK_NOT_FOUND", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const exit = yield* Effect.exit(store.transition(`agt_${"0".repeat(24)}`, "starting"))
          expect(failureTag(exit)).toBe("AGENT_TASK_NOT_FOUND")
        })
      )
    )
  )

  it.scoped("starting stamps started_at once; a terminal transition stamps completed_at; patches land", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          yield* TestClock.adjust("10 seconds")
          const taskId = yield* insertQueued()
          yield* TestClock.adjust("5 seconds")
          const starting = (yield* store.transition(taskId, "starting")).task
          expect(starting.started_at).toBe("1970-01-01T00:00:15.000Z")
          yield* TestClock.adjust("5 seconds")
          const running = (yield* store.transition(taskId, "running", { native_session_id: "s-1" })).task
          expect(running.started_at).toBe("1970-01-01T00:00:15.000Z")
          expect(running.native_session_id).toBe("s-1")
          expect(running.completed_at).toBeNull()
          yield* TestClock.adjust("5 seconds")
          const done = (yield* store.transition(taskId, "succeeded", {
            final_response: "preview",
            result_storage: "spool",
            result_size_bytes: 300_000,
            result_sha256: "a".repeat(64),
            native_turn_id: "t-1"
          })).task
          expect(done).toMatchObject({
            status: "succeeded",
            created_at: "1970-01-01T00:00:10.000Z",
            started_at: "1970-01-01T00:00:15.000Z",
            updated_at: "1970-01-01T00:00:25.000Z",
            completed_at: "1970-01-01T00:00:25.000Z",
            final_response: "preview",
            result_storage: "spool",
            result_size_bytes: 300_000,
            result_sha256: "a".repeat(64),
            native_session_id: "s-1",
            native_turn_id: "t-1",
            error_code: null
          })
          expect(yield* store.getTask(taskId)).toEqual(Option.some(done))
        })
      )
    )
  )

  it.scoped("an explicit started_at wins over the stamp", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertQueued()
          const task = (yield* store.transition(taskId, "starting", { started_at: "2024-01-02T03:04:05Z" }))
            .task
          expect(task.started_at).toBe("2024-01-02T03:04:05.000Z")
        })
      )
    )
  )

  it.scoped(
    "a terminal transition of a waiting task stales its request; a late answer is REQUEST_STALE",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const taskId = yield* insertRunning()
            const { request } = yield* store.createPendingRequest(
              taskId,
              "approval",
              { title: "run ls" },
              "2099-01-01T00:00:00Z",
              interaction
            )
            const result = yield* store.transition(taskId, "interrupted", {
              error_code: "AGENT_TASK_TIMED_OUT"
            })
            expect(result.staledRequestId).toEqual(Option.some(request.request_id))
            expect(result.task.pending_request_id).toBeNull()
            expect(Option.map(yield* store.getPendingRequest(request.request_id), (r) => r.status)).toEqual(
              Option.some("stale")
            )
            const late = yield* Effect.exit(
              store.resolveRequest(taskId, request.request_id, {
                decision: "approve_once",
                granted_permission_ids: []
              })
            )
            expect(failureTag(late)).toBe("REQUEST_STALE")
          })
        )
      )
  )

  it.scoped("setNativeIds records provider ids without touching the status", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const first = yield* store.setNativeIds(taskId, { sessionId: "sess" })
          expect([first.status, first.native_session_id, first.native_turn_id]).toEqual([
            "running",
            "sess",
            null
          ])
          const second = yield* store.setNativeIds(taskId, { turnId: "turn" })
          expect([second.native_session_id, second.native_turn_id]).toEqual(["sess", "turn"])
          // The row returned is the row stored, the whole of it.
          expect(Option.some(second)).toEqual(yield* store.getTask(taskId))
          const missing = yield* Effect.exit(store.setNativeIds(`agt_${"1".repeat(24)}`, { turnId: "x" }))
          expect(failureTag(missing)).toBe("AGENT_TASK_NOT_FOUND")
        })
      )
    )
  )
})

describe("a transition with its event", () => {
  it.scoped("the event is stored in the same transaction, stamped with the same time", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const task = yield* insertRunning()
          const result = yield* store.transition(
            task,
            "succeeded",
            { final_response: "done", result_storage: "inline", result_size_bytes: 4 },
            { eventType: "task.completed", payload: { result_storage: "inline" }, limits: eventLimits }
          )
          expect(result.eventRefusal).toEqual(Option.none())
          const events = yield* store.readEvents(task, 0, 500)
          expect(events.map((e) => [e.event_type, e.payload])).toEqual([
            ["task.completed", { result_storage: "inline" }]
          ])
          expect(events[0]?.created_at).toBe(result.task.completed_at)
          expect(result.task.event_count).toBe(1)
        })
      )
    )
  )

  it.scoped("a refused event does not stop the transition; a refused transition stores no event", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const full = yield* insertRunning()
          const limits = { maxEventsPerTask: 1, maxEventBytes: 1024 }
          yield* store.appendEvent(full, "turn.started", {}, limits)
          const result = yield* store.transition(
            full,
            "failed",
            { error_code: "AGENT_PROVIDER_ERROR" },
            {
              eventType: "task.failed",
              payload: { error_code: "AGENT_PROVIDER_ERROR" },
              limits
            }
          )
          expect(result.task.status).toBe("failed")
          expect(Option.map(result.eventRefusal, (r) => r._tag)).toEqual(
            Option.some("AGENT_EVENT_LIMIT_REACHED")
          )
          expect(yield* store.readEvents(full, 0, 500)).toHaveLength(1)

          const queued = yield* insertQueued()
          const refused = yield* Effect.exit(
            store.transition(
              queued,
              "succeeded",
              {},
              { eventType: "task.completed", payload: {}, limits: eventLimits }
            )
          )
          expect(failureTag(refused)).toBe("INVALID_TASK_TRANSITION")
          expect(yield* store.readEvents(queued, 0, 500)).toEqual([])
        })
      )
    )
  )

  it.scoped("the event counts against the task's shares exactly as an append of it does", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const payload = { error_code: "AGENT_PROVIDER_ERROR", detail: "d".repeat(400) }
          const bytes = (yield* store.storageUsage()).totalBytes
          const appended = yield* insertRunning()
          yield* store.appendEvent(appended, "task.failed", payload, eventLimits)
          yield* store.transition(appended, "failed", { error_code: "AGENT_PROVIDER_ERROR" })
          const cost = (yield* store.storageUsage()).totalBytes - bytes
          expect(cost).toBeGreaterThan(400)
          const moved = yield* insertRunning()
          const result = yield* store.transition(
            moved,
            "failed",
            { error_code: "AGENT_PROVIDER_ERROR" },
            { eventType: "task.failed", payload, limits: eventLimits }
          )
          expect(result.task.event_count).toBe(1)
          expect((yield* store.storageUsage()).totalBytes - bytes).toBe(2 * cost)
          // A share one byte short of the event refuses it, and the task still moves.
          const short = yield* insertRunning()
          const refused = yield* store.transition(
            short,
            "failed",
            { error_code: "AGENT_PROVIDER_ERROR" },
            {
              eventType: "task.failed",
              payload,
              limits: { ...eventLimits, maxStoredBytesPerTask: cost - 1 }
            }
          )
          expect(refused.task.status).toBe("failed")
          expect(refused.task.event_count).toBe(0)
          expect(Option.map(refused.eventRefusal, (r) => r.message)).toEqual(
            Option.some(`the task has reached its storage share of ${cost - 1} bytes`)
          )
          expect((yield* store.storageUsage()).totalBytes - bytes).toBe(2 * cost)
        })
      )
    )
  )
})
