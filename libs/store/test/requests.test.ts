/**
 * Pending approvals and questions (bridge-internals §5 store rules, §7; spec v0.7 §2.2): one
 * open request per task, compare-and-set resolution, stale/expired/foreign requests refused,
 * expiry never past the task deadline, abandonment by the provider.
 */
import { describe, expect, it } from "@effect/vitest"
import { canonicalJson } from "@serverfs/domain"
import { Effect, Either, Option, TestClock } from "effect"
import { TaskStore } from "../src/index.js"
import {
  eventLimits,
  failureTag,
  insertQueued,
  insertRunning,
  interaction,
  rawRows,
  scopedTempState,
  withRawSql,
  withStore
} from "./helpers.js"

const APPROVAL = { category: "command", title: "run ls", available_decisions: ["approve_once", "deny"] }
const APPROVE = { decision: "approve_once", granted_permission_ids: [] }
const LATER = "1970-01-01T00:30:00.000Z"

const openApproval = (taskId: string, expiresAt: string = LATER) =>
  Effect.flatMap(TaskStore, (store) =>
    store.createPendingRequest(taskId, "approval", APPROVAL, expiresAt, interaction)
  )

describe("createPendingRequest", () => {
  it.scoped("persists the request and moves running → waiting_for_approval/question in one step", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request, task } = yield* openApproval(taskId)
          expect(request.request_id).toMatch(/^req_[0-9a-f]{24}$/)
          expect(request).toMatchObject({
            task_id: taskId,
            kind: "approval",
            status: "pending",
            payload_json: canonicalJson(APPROVAL),
            expires_at: LATER,
            resolved_at: null,
            resolution_json: null
          })
          expect([task.status, task.pending_request_id]).toEqual(["waiting_for_approval", request.request_id])
          expect(yield* store.getPendingRequest(request.request_id)).toEqual(Option.some(request))
          const other = yield* insertRunning()
          const question = yield* store.createPendingRequest(
            other,
            "question",
            { questions: [] },
            LATER,
            interaction
          )
          expect(question.task.status).toBe("waiting_for_question")
        })
      )
    )
  )

  it.scoped("every request change returns the task as stored, its announcement counted", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const stored = (taskId: string) => Effect.map(store.getTask(taskId), Option.getOrThrow)
          const taskId = yield* insertRunning()
          const asked = yield* store.createPendingRequest(
            taskId,
            "approval",
            APPROVAL,
            LATER,
            interaction,
            eventLimits
          )
          expect(asked.task.event_count).toBe(1)
          expect(asked.task).toEqual(yield* stored(taskId))
          const answered = yield* store.resolveRequest(taskId, asked.request.request_id, APPROVE)
          expect(answered.task).toEqual(yield* stored(taskId))
          const again = yield* store.createPendingRequest(
            taskId,
            "question",
            {},
            LATER,
            interaction,
            eventLimits
          )
          expect(again.task.event_count).toBe(2)
          const abandoned = yield* store.abandonPendingRequest(taskId, again.request.request_id)
          expect(abandoned.task).toEqual(yield* stored(taskId))
          expect(abandoned.task.status).toBe("running")
        })
      )
    )
  )

  it.scoped("a second request while one is pending → REQUEST_PENDING, nothing written", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const first = yield* openApproval(taskId)
          const second = yield* Effect.exit(
            store.createPendingRequest(taskId, "question", {}, LATER, interaction)
          )
          expect(failureTag(second)).toBe("REQUEST_PENDING")
          expect(Option.map(yield* store.getTask(taskId), (t) => [t.status, t.pending_request_id])).toEqual(
            Option.some(["waiting_for_approval", first.request.request_id])
          )
        })
      )
    )
  )

  it.scoped("only a running task can ask; a missing task → AGENT_TASK_NOT_FOUND", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const queued = yield* insertQueued()
          expect(failureTag(yield* Effect.exit(openApproval(queued)))).toBe("INVALID_TASK_TRANSITION")
          const done = yield* insertRunning()
          yield* store.transition(done, "succeeded")
          expect(failureTag(yield* Effect.exit(openApproval(done)))).toBe("INVALID_TASK_TRANSITION")
          expect(failureTag(yield* Effect.exit(openApproval(`agt_${"2".repeat(24)}`)))).toBe(
            "AGENT_TASK_NOT_FOUND"
          )
          expect(Option.map(yield* store.getTask(queued), (t) => [t.status, t.pending_request_id])).toEqual(
            Option.some(["queued", null])
          )
        })
      )
    )
  )

  it.scoped("a payload over max_interaction_bytes → AGENT_INTERACTION_TOO_LARGE", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const exit = yield* Effect.exit(
            store.createPendingRequest(taskId, "approval", { title: "é".repeat(40) }, LATER, {
              maxInteractionBytes: 80
            })
          )
          expect(failureTag(exit)).toBe("AGENT_INTERACTION_TOO_LARGE")
          expect(Option.map(yield* store.getTask(taskId), (t) => t.status)).toEqual(Option.some("running"))
        })
      )
    )
  )

  it.scoped("expires_at never outlives the task deadline", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const taskId = yield* insertRunning({ deadline_at: "1970-01-01T00:10:00Z" })
          const { request } = yield* openApproval(taskId, "1970-01-01T00:30:00Z")
          expect(request.expires_at).toBe("1970-01-01T00:10:00.000Z")
        })
      )
    )
  )
})

describe("resolveRequest", () => {
  it.scoped("resolves once: resolution stored, task back to running, pointer cleared", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId)
          yield* TestClock.adjust("1 minute")
          const resolved = yield* store.resolveRequest(taskId, request.request_id, APPROVE)
          expect(resolved.request).toMatchObject({
            status: "resolved",
            resolution_json: canonicalJson(APPROVE),
            resolved_at: "1970-01-01T00:01:00.000Z"
          })
          expect([resolved.task.status, resolved.task.pending_request_id]).toEqual(["running", null])
          const again = yield* Effect.exit(store.resolveRequest(taskId, request.request_id, APPROVE))
          expect(failureTag(again)).toBe("REQUEST_ALREADY_RESOLVED")
          // The task can ask again afterwards.
          yield* openApproval(taskId)
        })
      )
    )
  )

  it.scoped(
    "20 concurrent resolvers of one request: exactly one wins, the others see REQUEST_ALREADY_RESOLVED",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const taskId = yield* insertRunning()
            const { request } = yield* openApproval(taskId)
            const outcomes = yield* Effect.all(
              Array.from({ length: 20 }, (_, i) =>
                Effect.either(
                  store.resolveRequest(taskId, request.request_id, {
                    decision: i % 2 ? "deny" : "approve_once",
                    n: i
                  })
                )
              ),
              { concurrency: "unbounded" }
            )
            const winners = outcomes.filter(Either.isRight)
            expect(winners).toHaveLength(1)
            expect(outcomes.filter(Either.isLeft).map((o) => o.left._tag)).toEqual(
              Array.from({ length: 19 }, () => "REQUEST_ALREADY_RESOLVED")
            )
            const stored = Option.getOrThrow(yield* store.getPendingRequest(request.request_id))
            expect(stored.resolution_json).toBe(winners[0]?.right.request.resolution_json)
          })
        )
      )
  )

  it.scoped("unknown request, or another task's request → REQUEST_NOT_FOUND", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const a = yield* insertRunning()
          const b = yield* insertRunning()
          const { request } = yield* openApproval(a)
          expect(failureTag(yield* Effect.exit(store.resolveRequest(b, request.request_id, APPROVE)))).toBe(
            "REQUEST_NOT_FOUND"
          )
          expect(
            failureTag(yield* Effect.exit(store.resolveRequest(a, `req_${"0".repeat(24)}`, APPROVE)))
          ).toBe("REQUEST_NOT_FOUND")
          expect(Option.map(yield* store.getPendingRequest(request.request_id), (r) => r.status)).toEqual(
            Option.some("pending")
          )
        })
      )
    )
  )

  it.scoped("an expired request (expires_at ≤ now) → REQUEST_STALE, task still waiting", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId, "1970-01-01T00:30:00Z")
          yield* TestClock.adjust("30 minutes")
          const exit = yield* Effect.exit(store.resolveRequest(taskId, request.request_id, APPROVE))
          expect(failureTag(exit)).toBe("REQUEST_STALE")
          expect(Option.map(yield* store.getTask(taskId), (t) => t.status)).toEqual(
            Option.some("waiting_for_approval")
          )
        })
      )
    )
  )

  it.scoped("a staled request → REQUEST_STALE; staleRequest reports whether it changed anything", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId)
          expect(yield* store.staleRequest(request.request_id)).toBe(true)
          expect(yield* store.staleRequest(request.request_id)).toBe(false)
          expect(yield* store.staleRequest(`req_${"5".repeat(24)}`)).toBe(false)
          const exit = yield* Effect.exit(store.resolveRequest(taskId, request.request_id, APPROVE))
          expect(failureTag(exit)).toBe("REQUEST_STALE")
        })
      )
    )
  )

  it.scoped(
    "abandoned → REQUEST_STALE, resolved → REQUEST_ALREADY_RESOLVED, the live one still resolves",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const taskId = yield* insertRunning()
            const first = yield* openApproval(taskId)
            yield* store.resolveRequest(taskId, first.request.request_id, APPROVE)
            const second = yield* openApproval(taskId)
            yield* store.abandonPendingRequest(taskId, second.request.request_id)
            const third = yield* openApproval(taskId)
            // The abandoned one is stale; the resolved one is resolved; only the third is live.
            expect(
              failureTag(yield* Effect.exit(store.resolveRequest(taskId, second.request.request_id, APPROVE)))
            ).toBe("REQUEST_STALE")
            expect(
              failureTag(yield* Effect.exit(store.resolveRequest(taskId, first.request.request_id, APPROVE)))
            ).toBe("REQUEST_ALREADY_RESOLVED")
            yield* store.resolveRequest(taskId, third.request.request_id, APPROVE)
          })
        )
      )
  )

  it.scoped("a resolution over the limit → AGENT_INTERACTION_TOO_LARGE, request still pending", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId)
          const exit = yield* Effect.exit(
            store.resolveRequest(
              taskId,
              request.request_id,
              { answers: ["x".repeat(100)] },
              { maxInteractionBytes: 64 }
            )
          )
          expect(failureTag(exit)).toBe("AGENT_INTERACTION_TOO_LARGE")
          expect(Option.map(yield* store.getPendingRequest(request.request_id), (r) => r.status)).toEqual(
            Option.some("pending")
          )
        })
      )
    )
  )
  it.scoped("a pending request the task no longer points at → REQUEST_STALE", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId)
          // Only a damaged row can get here (the store keeps pointer and request in step), which is
          // exactly why resolve checks it rather than trusting the request's own status.
          yield* withRawSql(
            temp.stateDir,
            rawRows(`UPDATE tasks SET pending_request_id = NULL WHERE task_id = '${taskId}'`)
          )
          const exit = yield* Effect.exit(store.resolveRequest(taskId, request.request_id, APPROVE))
          expect(failureTag(exit)).toBe("REQUEST_STALE")
          expect(Option.map(yield* store.getPendingRequest(request.request_id), (r) => r.status)).toEqual(
            Option.some("pending")
          )
        })
      )
    )
  )
})

describe("abandonPendingRequest", () => {
  it.scoped("stales the request and returns the task to running; twice is a no-op", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId)
          const first = yield* store.abandonPendingRequest(taskId, request.request_id)
          expect(first.staled).toBe(true)
          expect([first.task.status, first.task.pending_request_id]).toEqual(["running", null])
          const second = yield* store.abandonPendingRequest(taskId, request.request_id)
          expect(second.staled).toBe(false)
          expect(second.task.status).toBe("running")
          expect(
            failureTag(yield* Effect.exit(store.abandonPendingRequest(taskId, `req_${"6".repeat(24)}`)))
          ).toBe("REQUEST_NOT_FOUND")
          expect(
            failureTag(
              yield* Effect.exit(store.abandonPendingRequest(`agt_${"6".repeat(24)}`, request.request_id))
            )
          ).toBe("AGENT_TASK_NOT_FOUND")
        })
      )
    )
  )

  it.scoped("after staleRequest (expiry), abandoning still frees the task", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const taskId = yield* insertRunning()
          const { request } = yield* openApproval(taskId)
          yield* store.staleRequest(request.request_id)
          const result = yield* store.abandonPendingRequest(taskId, request.request_id)
          expect(result.staled).toBe(false)
          expect([result.task.status, result.task.pending_request_id]).toEqual(["running", null])
        })
      )
    )
  )
})

describe("createPendingRequest with its announcement", () => {
  it.scoped("the <kind>.requested event is stored with the request, in the same transaction", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const limits = { maxEventsPerTask: 100, maxEventBytes: 1024 }
          const approvalTask = yield* insertRunning()
          const { request } = yield* store.createPendingRequest(
            approvalTask,
            "approval",
            APPROVAL,
            LATER,
            interaction,
            limits
          )
          const questionTask = yield* insertRunning()
          const question = yield* store.createPendingRequest(
            questionTask,
            "question",
            {},
            LATER,
            interaction,
            limits
          )
          const announced = (taskId: string) =>
            Effect.map(store.readEvents(taskId, 0, 500), (events) =>
              events.map((e) => [e.event_type, e.payload])
            )
          expect(yield* announced(approvalTask)).toEqual([
            ["approval.requested", { request_id: request.request_id, expires_at: LATER }]
          ])
          expect(yield* announced(questionTask)).toEqual([
            ["question.requested", { request_id: question.request.request_id, expires_at: LATER }]
          ])
          // A refused request announces nothing.
          const refused = yield* Effect.either(
            store.createPendingRequest(approvalTask, "question", {}, LATER, interaction, limits)
          )
          expect(Either.isLeft(refused)).toBe(true)
          expect(yield* announced(approvalTask)).toHaveLength(1)
        })
      )
    )
  )
})
