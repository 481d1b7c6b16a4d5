import {
  type AgentError,
  AgentResultNotRetrievable,
  AgentTaskNotFound,
  DEFAULT_EVENTS_PAGE,
  type EventsResult,
  InvalidLimit,
  MAX_EVENTS_PAGE,
  MAX_RESULT_CHUNK_BYTES,
  type ResultReadResult,
  type TaskView
} from "@serverfs/domain"
import { ResultSpool, type TaskRecord, TaskStore } from "@serverfs/store"
import { Effect, Option } from "effect"
import { taskView } from "./TaskViews.js"

/** Reads of a task (spec v0.3 §12/§13/§19): its view, its events by cursor, its spooled result. */
export class TaskQueries extends Effect.Service<TaskQueries>()("@serverfs/bridge/TaskQueries", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const spool = yield* ResultSpool

    const requireTask = (taskId: string): Effect.Effect<TaskRecord, AgentTaskNotFound> =>
      Effect.flatMap(store.getTask(taskId), (task) =>
        Option.isSome(task)
          ? Effect.succeed(task.value)
          : Effect.fail(new AgentTaskNotFound({ message: "no such task" }))
      )

    const get = (taskId: string): Effect.Effect<TaskView, AgentTaskNotFound> =>
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        const pending =
          task.pending_request_id === null
            ? Option.none()
            : yield* store.getPendingRequest(task.pending_request_id)
        return yield* taskView(task, Option.getOrUndefined(pending))
      })

    const events = (
      taskId: string,
      after: number | undefined,
      limit: number | undefined
    ): Effect.Effect<EventsResult, AgentTaskNotFound | InvalidLimit> =>
      Effect.gen(function* () {
        const cursor = after ?? 0
        const size = limit ?? DEFAULT_EVENTS_PAGE
        if (cursor < 0 || size < 1 || size > MAX_EVENTS_PAGE) {
          return yield* new InvalidLimit({
            message: `after_event_id must be ≥ 0 and limit within 1..${MAX_EVENTS_PAGE}`
          })
        }
        const task = yield* requireTask(taskId)
        const page = yield* store.readEvents(taskId, cursor, size)
        const last = page[page.length - 1]
        return {
          correlation_id: task.correlation_id,
          events: [...page],
          next_after_event_id: last === undefined ? cursor : last.event_id
        }
      })

    const readResult = (
      taskId: string,
      offset: number | undefined,
      max: number | undefined
    ): Effect.Effect<ResultReadResult, AgentError> =>
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        if (task.result_storage !== "spool") {
          return yield* new AgentResultNotRetrievable({
            message: "the task has no spooled result; read final_response instead"
          })
        }
        const chunk = yield* spool.readResult(taskId, offset ?? 0, max ?? MAX_RESULT_CHUNK_BYTES)
        return { ...chunk, correlation_id: task.correlation_id }
      })

    return { requireTask, get, events, readResult } as const
  })
}) {}
