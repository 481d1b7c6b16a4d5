import {
  type AgentError,
  AgentMessageTooLarge,
  AgentTaskNotActive,
  type AgentTaskNotFound,
  AgentTaskTerminal,
  AgentTaskTimedOut,
  agentError,
  BridgeShutdown,
  type CancelResult,
  HostPathRedaction,
  isTerminal,
  MAX_MESSAGE_BYTES,
  type MessageResult
} from "@serverfs/domain"
import { Configuration } from "@serverfs/policy"
import { type TaskRecord, utf8Length } from "@serverfs/store"
import { Clock, DateTime, Effect, Fiber } from "effect"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { LiveTaskRegistry } from "./LiveTasks.js"
import { TaskEvents } from "./TaskEvents.js"
import { TaskQueries } from "./TaskQueries.js"
import { Terminations } from "./Terminations.js"

/**
 * Stopping and steering live tasks (bridge-internals §6/§9): terminal-first cancel, the
 * deadline, graceful shutdown, and messages into an active turn. Every stop is the same two
 * steps — the terminal move committed (which stales a pending interaction), then
 * `Terminations.stopRun` (interactions ended, the provider told to stop, the turn interrupted)
 * — and the task's scope then releases its guard and its lease.
 */
export class TaskControl extends Effect.Service<TaskControl>()("@serverfs/bridge/TaskControl", {
  scoped: Effect.gen(function* () {
    const live = yield* LiveTaskRegistry
    const terminations = yield* Terminations
    const queries = yield* TaskQueries
    const events = yield* TaskEvents
    const registry = yield* RuntimeRegistry
    const { workdirs } = yield* Configuration
    const messages = new HostPathRedaction(
      "",
      workdirs.map((w) => w.hostPath)
    )

    /**
     * Terminal-first cancel: the task is cancelled before this returns; its run is then stopped
     * in the background. Repeating it changes nothing.
     */
    const cancel = (taskId: string): Effect.Effect<CancelResult, AgentTaskNotFound> =>
      Effect.gen(function* () {
        const task = yield* queries.requireTask(taskId)
        if (isTerminal(task.status)) {
          return { task_id: taskId, status: task.status, correlation_id: task.correlation_id }
        }
        if (!(yield* terminations.cancelled(taskId))) {
          const now = yield* queries.requireTask(taskId)
          return { task_id: taskId, status: now.status, correlation_id: now.correlation_id }
        }
        yield* terminations.stopRun(task.runtime, taskId, "cancelled")
        return { task_id: taskId, status: "cancelled" as const, correlation_id: task.correlation_id }
      })

    /**
     * A live task's deadline: interrupted with AGENT_TASK_TIMED_OUT, then its run stopped. Runs
     * in the task's scope (its end interrupts this fiber), hence the stop is not awaited here.
     */
    const watchDeadline = (task: TaskRecord): Effect.Effect<void> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const deadline = DateTime.toEpochMillis(DateTime.unsafeMake(task.deadline_at))
        yield* Effect.sleep(Math.max(0, deadline - now))
        if (!live.has(task.task_id)) return
        const timedOut = new AgentTaskTimedOut({ message: "the task passed its deadline" })
        if (!(yield* terminations.terminate(task.task_id, timedOut))) return
        yield* terminations.stopRun(task.runtime, task.task_id, "expired")
      })

    const sendMessage = (taskId: string, message: string): Effect.Effect<MessageResult, AgentError> =>
      Effect.gen(function* () {
        const messageBytes = utf8Length(message)
        if (messageBytes > MAX_MESSAGE_BYTES) {
          return yield* new AgentMessageTooLarge({
            message: `the message exceeds ${MAX_MESSAGE_BYTES} bytes`
          })
        }
        const task = yield* queries.requireTask(taskId)
        if (isTerminal(task.status)) {
          return yield* new AgentTaskTerminal({
            message: "the task has finished; submit a new task with continue_from_task_id to follow up"
          })
        }
        const adapter = registry.get(task.runtime)
        if (
          task.status === "queued" ||
          task.status === "starting" ||
          adapter === undefined ||
          !live.has(taskId)
        ) {
          return yield* new AgentTaskNotActive({ message: "the task has no active turn to steer" })
        }
        // The provider's refusal goes back to the client: its message redacted like a stored one.
        yield* adapter
          .steer(taskId, message)
          .pipe(Effect.mapError((error) => agentError(error._tag, messages.message(error.message))))
        yield* events.append(taskId, "user.message", { bytes: messageBytes })
        return { task_id: taskId, accepted: true as const, correlation_id: task.correlation_id }
      })

    // Graceful shutdown (runs before the turn fibers are torn down): every live task is
    // interrupted honestly with BRIDGE_SHUTDOWN — terminal first, so a pending interaction is
    // staled as part of that move rather than withdrawn — then its run is stopped the one way,
    // awaited here: the bridge exits only once every turn has released its guard and lease.
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        live.all(),
        (liveTask) =>
          Effect.gen(function* () {
            yield* terminations.terminate(
              liveTask.taskId,
              new BridgeShutdown({ message: "the bridge stopped during the task" })
            )
            const task = yield* queries.requireTask(liveTask.taskId).pipe(Effect.option)
            if (task._tag === "Some") {
              yield* Fiber.await(yield* terminations.stopRun(task.value.runtime, liveTask.taskId, "stale"))
            }
            yield* live.interruptTurn(liveTask.taskId)
          }),
        { concurrency: "unbounded", discard: true }
      )
    )

    return { cancel, watchDeadline, sendMessage } as const
  })
}) {}
