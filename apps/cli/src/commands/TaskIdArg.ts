import { Args } from "@effect/cli"
import { InvalidRequest } from "@serverfs/domain"
import { Effect } from "effect"
import { type CommandFailed, reportFailure } from "../output/Failure.js"

/** The task id argument of the task and diagnostics commands. */
export const taskIdArg = Args.text({ name: "TASK_ID" }).pipe(
  Args.withDescription("A task id (agt_ + 24 hex).")
)

/**
 * A task id is `agt_` + 24 lowercase hex (bridge-internals §5). Checked before any call, so
 * whatever the CLI echoes back (the `bridge_unavailable` disposition) is bounded and printable.
 */
const TASK_ID = /^agt_[0-9a-f]{24}$/

export const checkTaskId = (id: string, json: boolean): Effect.Effect<string, CommandFailed> =>
  TASK_ID.test(id)
    ? Effect.succeed(id)
    : reportFailure(
        json,
        new InvalidRequest({ message: "a task id is agt_ followed by 24 lowercase hex digits" })
      )
