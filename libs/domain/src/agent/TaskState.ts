import { Either, Schema } from "effect"
import { InvalidTaskTransition } from "./AgentErrors.js"

/**
 * The task state machine (bridge-internals §6, spec v0.3 §11) as a pure transition table: the
 * only way a task's status changes is through `transition`. A waiting task cannot go straight to
 * failed (an adapter error while waiting interrupts it), and terminal states allow nothing.
 */
export const TaskStatus = Schema.Literal(
  "queued",
  "starting",
  "running",
  "waiting_for_approval",
  "waiting_for_question",
  "succeeded",
  "failed",
  "cancelled",
  "interrupted"
)
export type TaskStatus = typeof TaskStatus.Type

export const TerminalStatus = Schema.Literal("succeeded", "failed", "cancelled", "interrupted")
export type TerminalStatus = typeof TerminalStatus.Type

const TRANSITIONS: { readonly [From in TaskStatus]: ReadonlyArray<TaskStatus> } = {
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

export const isTerminal = (status: TaskStatus): status is TerminalStatus => TRANSITIONS[status].length === 0

export const isWaiting = (status: TaskStatus): boolean =>
  status === "waiting_for_approval" || status === "waiting_for_question"

export const canTransition = (from: TaskStatus, to: TaskStatus): boolean => TRANSITIONS[from].includes(to)

export const transition = (
  from: TaskStatus,
  to: TaskStatus
): Either.Either<TaskStatus, InvalidTaskTransition> =>
  canTransition(from, to)
    ? Either.right(to)
    : Either.left(new InvalidTaskTransition({ message: `a ${from} task cannot become ${to}` }))

/** Every (from, to) pair of the table, for property tests and docs. */
export const allowedTransitions = (): ReadonlyArray<readonly [TaskStatus, TaskStatus]> =>
  (Object.keys(TRANSITIONS) as Array<TaskStatus>).flatMap((from) =>
    TRANSITIONS[from].map((to) => [from, to] as const)
  )
