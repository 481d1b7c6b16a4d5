import { InvalidLimit, InvalidRequest, type TaskListResult, TaskStatus } from "@serverfs/domain"
import type { TaskStoreShape } from "@serverfs/store"
import { Effect, Schema } from "effect"

/** `task.list` (issue 10): the store's bounded listing, the caller's arguments checked first. */
export const DEFAULT_TASK_LIST_LIMIT = 50
export const MAX_TASK_LIST_LIMIT = 500
/** Filters are exact matches: anything longer than an alias or a runtime name matches nothing. */
const MAX_FILTER_CHARS = 128
const MAX_STATUSES = 16

export interface TaskListArguments {
  readonly statuses?: ReadonlyArray<string> | undefined
  readonly workdir?: string | undefined
  readonly runtime?: string | undefined
  readonly limit?: number | undefined
}

const isStatus = Schema.is(TaskStatus)

export const listTasks = (
  store: TaskStoreShape,
  args: TaskListArguments
): Effect.Effect<TaskListResult, InvalidRequest | InvalidLimit> =>
  Effect.gen(function* () {
    const limit = args.limit ?? DEFAULT_TASK_LIST_LIMIT
    if (limit < 1 || limit > MAX_TASK_LIST_LIMIT)
      return yield* new InvalidLimit({ message: `limit must be within 1..${MAX_TASK_LIST_LIMIT}` })
    const statuses = args.statuses ?? []
    if (statuses.length > MAX_STATUSES)
      return yield* new InvalidRequest({ message: `at most ${MAX_STATUSES} statuses` })
    // The unknown string itself is not echoed: it is caller text of any content.
    if (!statuses.every(isStatus))
      return yield* new InvalidRequest({
        message: `a status must be one of ${TaskStatus.literals.join(", ")}`
      })
    for (const filter of [args.workdir, args.runtime]) {
      if (filter !== undefined && (filter.length === 0 || filter.length > MAX_FILTER_CHARS))
        return yield* new InvalidRequest({ message: `a filter must be 1..${MAX_FILTER_CHARS} characters` })
    }
    const listing = yield* store.listTasks({
      statuses: statuses.filter(isStatus),
      workdirAlias: args.workdir,
      runtime: args.runtime,
      limit
    })
    return { tasks: [...listing.tasks], truncated: listing.truncated }
  })
