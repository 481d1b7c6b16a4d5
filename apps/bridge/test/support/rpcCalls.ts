/**
 * Test support: the bridge's RPC from the test process — calls through the real client, their
 * outcomes, waits on a task's status or events (one `eventually` on Schedule), submit params.
 */
import type {
  BridgeMethod,
  MethodParams,
  MethodResult,
  TaskEvent,
  TaskStatus,
  TaskView
} from "@serverfs/domain"
import type { BridgeClientService } from "@serverfs/rpc"
import { eventuallyAsync } from "@serverfs/testkit"
import { Effect, Either } from "effect"

// ---- RPC helpers ------------------------------------------------------------------------------

export const call = <M extends BridgeMethod>(
  client: BridgeClientService,
  method: M,
  params: MethodParams<M>
): Promise<MethodResult<M>> => Effect.runPromise(client.call(method, params))

export interface CallFailure {
  readonly code: string
  readonly message: string
}

/** The failure of a call that must fail (a success fails the test). */
export const callError = async <M extends BridgeMethod>(
  client: BridgeClientService,
  method: M,
  params: MethodParams<M>
): Promise<CallFailure> => {
  const result = await Effect.runPromise(Effect.either(client.call(method, params)))
  if (Either.isRight(result)) {
    throw new Error(`${method} was expected to fail but returned ${JSON.stringify(result.right)}`)
  }
  return { code: result.left._tag, message: result.left.message }
}

/** The outcome of a call as a code ("OK" on success), for concurrent races. */
export const callCode = async <M extends BridgeMethod>(
  client: BridgeClientService,
  method: M,
  params: MethodParams<M>
): Promise<string> => {
  const result = await Effect.runPromise(Effect.either(client.call(method, params)))
  return Either.isRight(result) ? "OK" : result.left._tag
}

export type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly code: string }

/** A call's outcome as a value, for concurrent calls. */
export const callOutcome = async <M extends BridgeMethod>(
  client: BridgeClientService,
  method: M,
  params: MethodParams<M>
): Promise<Outcome<MethodResult<M>>> => {
  const result = await Effect.runPromise(Effect.either(client.call(method, params)))
  return Either.isRight(result) ? { ok: true, value: result.right } : { ok: false, code: result.left._tag }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Retry `probe` until it returns a value other than undefined (bounded): `eventually`, as a Promise. */
export const waitUntil = <A>(
  what: string,
  probe: () => Promise<A | undefined> | A | undefined,
  timeoutMs = 30_000,
  intervalMs = 25
): Promise<A> => eventuallyAsync(what, probe, timeoutMs, intervalMs)

export const getTask = (client: BridgeClientService, taskId: string): Promise<TaskView> =>
  call(client, "task.get", { task_id: taskId })

/** Poll task.get until the task has one of `statuses` (bounded). */
export const waitForStatus = (
  client: BridgeClientService,
  taskId: string,
  statuses: TaskStatus | ReadonlyArray<TaskStatus>,
  timeoutMs = 30_000,
  intervalMs = 25
): Promise<TaskView> => {
  const wanted: ReadonlyArray<TaskStatus> = typeof statuses === "string" ? [statuses] : statuses
  let last: TaskStatus | undefined
  return waitUntil(
    `task ${taskId} to become ${wanted.join("|")} (last: ${last})`,
    async () => {
      const view = await getTask(client, taskId)
      last = view.status
      return wanted.includes(view.status) ? view : undefined
    },
    timeoutMs,
    intervalMs
  )
}

export const TERMINAL: ReadonlyArray<TaskStatus> = ["succeeded", "failed", "cancelled", "interrupted"]

/** Every event of a task, read page by page. */
export const allEvents = async (
  client: BridgeClientService,
  taskId: string,
  pageSize = 500
): Promise<Array<TaskEvent>> => {
  const out: Array<TaskEvent> = []
  let cursor = 0
  for (;;) {
    const page = await call(client, "task.events", {
      task_id: taskId,
      after_event_id: cursor,
      limit: pageSize
    })
    out.push(...page.events)
    if (page.events.length === 0) return out
    cursor = page.next_after_event_id
  }
}

export const eventTypes = (events: ReadonlyArray<TaskEvent>): Array<string> => events.map((e) => e.event_type)

/** Wait until the task has an event of `type`; returns all events then. */
export const waitForEvent = (
  client: BridgeClientService,
  taskId: string,
  type: string,
  timeoutMs = 30_000
): Promise<Array<TaskEvent>> =>
  waitUntil(
    `event ${type} of ${taskId}`,
    async () => {
      const events = await allEvents(client, taskId)
      return events.some((e) => e.event_type === type) ? events : undefined
    },
    timeoutMs
  )

export interface SubmitInput {
  readonly prompt: string
  readonly workdir?: string
  readonly path?: string
  readonly profile?: string
  readonly runtime?: string
  readonly continue_from_task_id?: string
  readonly correlation_id?: string
  readonly idempotency_key?: string
}

export const submitParams = (input: SubmitInput, defaultWorkdir: string): MethodParams<"task.submit"> => ({
  runtime: input.runtime ?? "fake",
  workdir: input.workdir ?? defaultWorkdir,
  path: input.path ?? "",
  profile: input.profile ?? "review",
  prompt: input.prompt,
  ...(input.continue_from_task_id === undefined
    ? {}
    : { continue_from_task_id: input.continue_from_task_id }),
  ...(input.correlation_id === undefined ? {} : { correlation_id: input.correlation_id }),
  ...(input.idempotency_key === undefined ? {} : { idempotency_key: input.idempotency_key })
})

/** The JSON lines of a bridge's stderr, parsed (a non-JSON line fails the test). */
