import {
  AgentInteractionTooLarge,
  isWaiting,
  RequestAlreadyResolved,
  type RequestKind,
  RequestPending,
  RequestStale,
  transition as tableTransition
} from "@serverfs/domain"
import { Effect, Option } from "effect"
import type { EventLog } from "./EventLog.js"
import {
  canonical,
  fromEither,
  isoEffect,
  nowIso,
  requestNotFound,
  type StoreContext
} from "./StoreContext.js"
import { makeRequestId } from "./TaskRecord.js"
import type { EventLimits, Instant } from "./TaskStoreShape.js"
import { utf8Length } from "./Utf8.js"

/**
 * Pending approvals and questions (bridge-internals §7, spec v0.7 §2.2): persisted before they
 * are exposed, answered by compare-and-set, staled when they expire, are abandoned or their task
 * ends. Each change moves the task in or out of its waiting status in the same transaction.
 */
export const makePendingRequests = (ctx: StoreContext, events: EventLog) => {
  const { sql, mutate, requireTask, selectRequest, storedRequest, storedTask, writeTask } = ctx
  const { appendWithin } = events

  const createPendingRequest = Effect.fn("TaskStore.createPendingRequest")(function* (
    taskId: string,
    kind: RequestKind,
    payload: unknown,
    expiresAt: Instant,
    limits: { readonly maxInteractionBytes: number },
    announce?: EventLimits
  ) {
    const payloadJson = yield* canonical(payload)
    if (utf8Length(payloadJson) > limits.maxInteractionBytes)
      return yield* new AgentInteractionTooLarge({
        message: `the ${kind} payload is larger than ${limits.maxInteractionBytes} bytes`
      })
    const requestId = yield* makeRequestId
    const now = yield* nowIso
    const expires = yield* isoEffect(expiresAt)
    return yield* mutate(
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        if (task.pending_request_id !== null)
          return yield* new RequestPending({ message: "the task already has a pending request" })
        const status = yield* fromEither(
          tableTransition(task.status, kind === "approval" ? "waiting_for_approval" : "waiting_for_question")
        )
        // spec v0.7 §2.2: a request never outlives its task's deadline.
        const effectiveExpiry =
          Date.parse(expires) < Date.parse(task.deadline_at) ? expires : task.deadline_at
        yield* sql`INSERT INTO pending_requests ${sql.insert({
          request_id: requestId,
          task_id: taskId,
          kind,
          status: "pending",
          payload_json: payloadJson,
          created_at: now,
          expires_at: effectiveExpiry,
          resolved_at: null,
          resolution_json: null
        })}`
        if (announce !== undefined) {
          // Refusals (the task's event limit) leave the request in place: it is what matters.
          yield* appendWithin(
            [
              {
                taskId,
                eventType: `${kind}.requested`,
                payload: { request_id: requestId, expires_at: effectiveExpiry }
              }
            ],
            announce,
            now
          )
        }
        // Written after the event's count update, so that its RETURNING row is the final one.
        const written = yield* writeTask({ ...task, status, updated_at: now, pending_request_id: requestId })
        return { request: yield* storedRequest(requestId), task: written }
      })
    )
  })

  const resolveRequest = Effect.fn("TaskStore.resolveRequest")(function* (
    taskId: string,
    requestId: string,
    resolution: unknown,
    limits: { readonly maxInteractionBytes?: number } = {}
  ) {
    const resolutionJson = yield* canonical(resolution)
    if (limits.maxInteractionBytes !== undefined && utf8Length(resolutionJson) > limits.maxInteractionBytes)
      return yield* new AgentInteractionTooLarge({
        message: `the resolution is larger than ${limits.maxInteractionBytes} bytes`
      })
    const now = yield* nowIso
    return yield* mutate(
      Effect.gen(function* () {
        const found = yield* selectRequest(requestId)
        if (Option.isNone(found) || found.value.task_id !== taskId) return yield* requestNotFound(requestId)
        const request = found.value
        if (request.status === "resolved")
          return yield* new RequestAlreadyResolved({ message: `request ${requestId} was already resolved` })
        if (request.status === "stale")
          return yield* new RequestStale({ message: `request ${requestId} is stale` })
        const task = yield* storedTask(taskId)
        if (task.pending_request_id !== requestId)
          return yield* new RequestStale({
            message: `request ${requestId} is not the task's current request`
          })
        if (Date.parse(request.expires_at) <= Date.parse(now))
          return yield* new RequestStale({ message: `request ${requestId} has expired` })
        const status = yield* fromEither(tableTransition(task.status, "running"))
        // The compare-and-set: only a still-pending row flips to resolved. Under BEGIN IMMEDIATE
        // the checks above already saw the final state; this keeps the rule in the statement too.
        const won = yield* sql`
          UPDATE pending_requests
          SET status = 'resolved', resolution_json = ${resolutionJson}, resolved_at = ${now}
          WHERE request_id = ${requestId} AND status = 'pending'
          RETURNING request_id`
        if (won.length !== 1)
          return yield* new RequestAlreadyResolved({ message: `request ${requestId} was already resolved` })
        const written = yield* writeTask({ ...task, status, updated_at: now, pending_request_id: null })
        return { request: yield* storedRequest(requestId), task: written }
      })
    )
  })

  const staleRequest = (requestId: string) =>
    mutate(
      Effect.map(
        sql`UPDATE pending_requests SET status = 'stale' WHERE request_id = ${requestId} AND status = 'pending'
            RETURNING request_id`,
        (rows) => rows.length > 0
      )
    ).pipe(Effect.withSpan("TaskStore.staleRequest"))

  const abandonPendingRequest = Effect.fn("TaskStore.abandonPendingRequest")(function* (
    taskId: string,
    requestId: string
  ) {
    const now = yield* nowIso
    return yield* mutate(
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        const found = yield* selectRequest(requestId)
        if (Option.isNone(found) || found.value.task_id !== taskId) return yield* requestNotFound(requestId)
        const staled = yield* sql`
          UPDATE pending_requests SET status = 'stale'
          WHERE request_id = ${requestId} AND status = 'pending'
          RETURNING request_id`
        if (task.pending_request_id === requestId) {
          // The task waits on this request by the store's invariant, so the move back to running
          // is in the table; anything else would be a corrupted row.
          const status = isWaiting(task.status)
            ? yield* Effect.orDie(fromEither(tableTransition(task.status, "running")))
            : task.status
          const written = yield* writeTask({ ...task, status, updated_at: now, pending_request_id: null })
          return { task: written, staled: staled.length > 0 }
        }
        return { task: yield* storedTask(taskId), staled: staled.length > 0 }
      })
    )
  })

  const getPendingRequest = (requestId: string) => Effect.orDie(selectRequest(requestId))

  return { createPendingRequest, resolveRequest, staleRequest, abandonPendingRequest, getPendingRequest }
}
