import { Command, Options } from "@effect/cli"
import { isTerminal, MAX_EVENTS_PAGE } from "@serverfs/domain"
import { Console, Effect, Option } from "effect"
import { callBridge, printJson } from "../output/Failure.js"
import { json } from "../output/JsonOption.js"
import { Style } from "../output/Style.js"
import { renderCancel, renderTaskList, renderTaskSummary } from "../render/TaskRender.js"
import { taskSummary } from "../render/TaskSummary.js"
import { TIMELINE_HEADER, timelineEntry, timelineLine } from "../render/Timeline.js"
import { checkTaskId, taskIdArg } from "./TaskIdArg.js"

/**
 * `serverfs tasks list|show|events|cancel` over the bridge's RPC (task.list, task.get,
 * task.events, task.cancel). The CLI never opens the store.
 */
const status = Options.text("status").pipe(
  Options.repeated,
  Options.withDescription("Only tasks with this status (repeat for several).")
)
const workdir = Options.text("workdir").pipe(
  Options.optional,
  Options.withDescription("Only this workdir alias.")
)
const runtime = Options.text("runtime").pipe(Options.optional, Options.withDescription("Only this runtime."))
const limit = Options.integer("limit").pipe(
  Options.optional,
  Options.withDescription("At most this many tasks, newest first (1..500, default 50).")
)

const list = Command.make("list", { status, workdir, runtime, limit, json }, (args) =>
  Effect.gen(function* () {
    const result = yield* callBridge(
      "task.list",
      {
        ...(args.status.length > 0 ? { statuses: args.status } : {}),
        ...Option.match(args.workdir, { onNone: () => ({}), onSome: (w) => ({ workdir: w }) }),
        ...Option.match(args.runtime, { onNone: () => ({}), onSome: (r) => ({ runtime: r }) }),
        ...Option.match(args.limit, { onNone: () => ({}), onSome: (l) => ({ limit: l }) })
      },
      args.json
    )
    if (args.json) return yield* printJson(result)
    yield* Console.log(renderTaskList(yield* Style, result))
  })
).pipe(Command.withDescription("List tasks, newest first."))

const show = Command.make("show", { taskId: taskIdArg, json }, (args) =>
  Effect.gen(function* () {
    const id = yield* checkTaskId(args.taskId, args.json)
    const summary = taskSummary(yield* callBridge("task.get", { task_id: id }, args.json))
    if (args.json) return yield* printJson(summary)
    yield* Console.log(renderTaskSummary(yield* Style, summary))
  })
).pipe(Command.withDescription("Show a task: state, times, error code, pending request, manifest summary."))

const after = Options.integer("after").pipe(
  Options.withDefault(0),
  Options.withDescription("Only events after this event id.")
)
const followOption = Options.boolean("follow").pipe(
  Options.withAlias("f"),
  Options.withDescription("Keep printing new events until the task has ended (Ctrl-C stops, exit 0).")
)
const POLL_INTERVAL = "500 millis"

/**
 * Print a task's events from `after` on, page by page, each once. With `follow`, poll until the
 * task is terminal and its events are drained: the terminal status is read BEFORE the last
 * page, so an event written just before the end is never missed.
 */
const events = Command.make("events", { taskId: taskIdArg, after, follow: followOption, json }, (args) =>
  Effect.gen(function* () {
    const id = yield* checkTaskId(args.taskId, args.json)
    let cursor = args.after
    let headerPrinted = args.json
    let ended = false
    for (;;) {
      if (args.follow && !ended)
        ended = isTerminal((yield* callBridge("task.get", { task_id: id }, args.json)).status)
      const page = yield* callBridge(
        "task.events",
        { task_id: id, after_event_id: cursor, limit: MAX_EVENTS_PAGE },
        args.json
      )
      for (const event of page.events) {
        const entry = timelineEntry(event)
        if (args.json) yield* Console.log(JSON.stringify(entry))
        else {
          if (!headerPrinted) yield* Console.log(TIMELINE_HEADER)
          headerPrinted = true
          yield* Console.log(timelineLine(entry))
        }
      }
      cursor = page.next_after_event_id
      if (page.events.length === MAX_EVENTS_PAGE) continue
      if (!args.follow || ended) break
      yield* Effect.sleep(POLL_INTERVAL)
    }
    if (!headerPrinted) yield* Console.log("no events")
  })
).pipe(Command.withDescription("Print a task's events as a timeline (payload summaries, never their text)."))

const cancel = Command.make("cancel", { taskId: taskIdArg, json }, (args) =>
  Effect.gen(function* () {
    const id = yield* checkTaskId(args.taskId, args.json)
    const result = yield* callBridge("task.cancel", { task_id: id }, args.json)
    // The correlation id stays out of the operator's output.
    if (args.json) return yield* printJson({ task_id: result.task_id, status: result.status })
    yield* Console.log(renderCancel(result))
  })
).pipe(Command.withDescription("Cancel a task."))

export const tasksCommand = Command.make("tasks").pipe(
  Command.withDescription("The bridge's tasks."),
  Command.withSubcommands([list, show, events, cancel])
)
