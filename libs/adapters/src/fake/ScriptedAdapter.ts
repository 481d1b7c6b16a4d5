import {
  AgentProviderError,
  AgentTaskNotActive,
  type ApprovalPayload,
  Decision,
  type QuestionPayload
} from "@serverfs/domain"
import { Effect, Layer, Queue } from "effect"
import {
  type ProviderAdapter,
  ProviderAdapterTag,
  type TurnRequest,
  type TurnSink
} from "../ProviderAdapter.js"
import { largeText, parseScript, type ScriptedCommand } from "./ScriptedCommand.js"
import { listScriptedModels } from "./ScriptedModels.js"

/**
 * The scripted runtime (`fake`): a deterministic stand-in for a provider, for the tests and the
 * demo. It runs inside the bridge process, so a bridge crash provably stops it — which is what
 * its reconcile reports (unless a prompt asked it to pretend otherwise with `survive:`). It is
 * enabled only by explicit bridge configuration and shown to MCP clients only where an
 * administrator allowlists `fake`; it is never a default.
 */
const SURVIVOR = "-survivor"
const VERSION = "scripted-1"

interface ActiveTurn {
  readonly steering: Queue.Queue<string>
}

const commandApproval = (command: string): ApprovalPayload => ({
  category: "command",
  title: "Run a command",
  command_display: command,
  available_decisions: [...Decision.literals]
})

const permissionApproval = (ids: ReadonlyArray<string>): ApprovalPayload => ({
  category: "provider_permission",
  title: "Grant permissions",
  available_decisions: [...Decision.literals],
  requested_permissions: ids.map((id) => ({ permission_id: id, kind: "scripted", details: { id } }))
})

const question = (prompt: string, multi: boolean): QuestionPayload => ({
  questions: [
    {
      question_id: "q1",
      prompt,
      options: [
        { option_id: "a", label: "Option A" },
        { option_id: "b", label: "Option B", description: "the other one" }
      ],
      multi_select: multi,
      allow_free_text: true
    }
  ]
})

const providerError = (message: string) => new AgentProviderError({ message })

/**
 * A file the script writes below the turn's cwd, through the bridge's `TurnFiles`: the
 * workspace's create/edit transactions with every check an MCP mutation gets, under the task's
 * lease (this runtime is reachable by any chat once an administrator enables it). A path that
 * is empty, absolute or has an empty, `.` or `..` component never leaves the turn's directory.
 */
const writeInside = (
  request: TurnRequest,
  relative: string,
  content: string
): Effect.Effect<void, AgentProviderError> => {
  const parts = relative.split("/")
  if (relative === "" || relative.startsWith("/") || parts.some((s) => s === "" || s === ".." || s === ".")) {
    return Effect.fail(providerError("scripted write refused: the path must stay below the task's directory"))
  }
  if (request.files === undefined) return Effect.fail(providerError("scripted write refused: no file access"))
  return request.files
    .writeText(relative, content)
    .pipe(Effect.mapError((refused) => providerError(`scripted write refused: ${refused.message}`)))
}

export const makeScriptedAdapter = (): Effect.Effect<ProviderAdapter> =>
  Effect.sync(() => {
    const active = new Map<string, ActiveTurn>()

    const step = (command: ScriptedCommand, request: TurnRequest, sink: TurnSink, turn: ActiveTurn) =>
      Effect.gen(function* () {
        switch (command._tag) {
          case "complete":
            return command.text
          case "say":
            yield* sink.event("agent.message", { text: command.text })
            return undefined
          case "events":
            for (let i = 1; i <= command.count; i++)
              yield* sink.event("agent.message", { text: `message ${i}` })
            return undefined
          case "approval": {
            const answer = yield* sink.requestApproval(commandApproval(command.command))
            // cancel_task: the bridge cancels the task; a real provider stops when told to.
            if (answer.decision === "cancel_task") return yield* Effect.never
            return `approval=${answer.decision}`
          }
          case "permission": {
            const answer = yield* sink.requestApproval(permissionApproval(command.ids))
            if (answer.decision === "cancel_task") return yield* Effect.never
            return `permission=${answer.decision} granted=${answer.granted_permission_ids.join(",")}`
          }
          case "question": {
            const answer = yield* sink.requestQuestion(question(command.prompt, command.multi))
            return JSON.stringify(answer)
          }
          case "steer":
            return `steered=${yield* Queue.take(turn.steering)}`
          case "wait":
            return yield* Effect.never
          case "sleep":
            yield* Effect.sleep(command.ms)
            return undefined
          case "large":
            return largeText(command.bytes)
          case "fail":
            return yield* providerError(command.message === "" ? "scripted failure" : command.message)
          case "write":
            yield* writeInside(request, command.path, command.content)
            yield* sink.event("file_change.started", { path: command.path })
            return undefined
          case "survive":
            return undefined
        }
      }).pipe(
        Effect.catchTag("InteractionEnded", (ended) =>
          Effect.fail(providerError(`interaction ${ended.reason}`))
        )
      )

    const adapter: ProviderAdapter = {
      name: "fake",
      inFlightRecovery: "none",
      probe: () =>
        Effect.succeed({
          name: "fake",
          available: true,
          version: VERSION,
          persistent_session: true,
          live_steer: true,
          interactive_approval: true,
          interactive_question: true,
          in_flight_recovery: "none",
          model_override: true,
          model_discovery: "runtime_catalog"
        }),
      listModels: listScriptedModels,
      run: (request, sink) =>
        Effect.gen(function* () {
          const commands = parseScript(request.prompt)
          const survive = commands?.some((c) => c._tag === "survive") ?? false
          const sessionId =
            request.resume?.sessionId ?? `fake-session-${request.taskId}${survive ? SURVIVOR : ""}`
          yield* sink.nativeIds({ sessionId, turnId: `fake-turn-${request.taskId}` })
          yield* sink.event("turn.started", request.resume === null ? {} : { continued: true })
          if (commands === undefined) return { finalText: `echo: ${request.prompt}` }
          const turn: ActiveTurn = { steering: yield* Queue.unbounded<string>() }
          active.set(request.taskId, turn)
          let finalText = ""
          for (const command of commands) {
            const produced = yield* step(command, request, sink, turn)
            if (produced !== undefined) finalText = produced
          }
          return { finalText }
        }).pipe(Effect.ensuring(Effect.sync(() => active.delete(request.taskId)))),
      steer: (taskId, message) =>
        Effect.suspend(() => {
          const turn = active.get(taskId)
          return turn === undefined
            ? Effect.fail(new AgentTaskNotActive({ message: "the task has no active turn" }))
            : Queue.offer(turn.steering, message).pipe(Effect.asVoid)
        }),
      // The bridge interrupts the turn's fiber; the scripted runtime has nothing else to stop.
      cancel: () => Effect.void,
      // Its turns run inside the bridge process and die with it: nothing to re-attach, ever.
      reattach: () =>
        Effect.fail(providerError("the scripted runtime cannot re-attach a turn after a restart")),
      reconcile: (turn) =>
        Effect.sync(() => {
          if (active.has(turn.taskId)) {
            return {
              status: "UNKNOWN",
              providerActive: true,
              detail: "the turn is still running in this process"
            }
          }
          if (turn.sessionId?.endsWith(SURVIVOR) === true) {
            return {
              status: "UNKNOWN",
              providerActive: null,
              detail: "the script asked to be treated as unprovable"
            }
          }
          return {
            status: turn.sessionId === null ? "NOT_RECOVERABLE" : "SESSION_RESUMABLE",
            providerActive: false,
            detail: "the scripted runtime ran inside the previous bridge process"
          }
        }),
      close: () => Effect.void
    }
    return adapter
  })

/** The scripted runtime as the port's service (it acquires nothing: no scope needed). */
const layer: Layer.Layer<ProviderAdapterTag> = Layer.effect(ProviderAdapterTag, makeScriptedAdapter())

export const ScriptedAdapter = { make: makeScriptedAdapter, layer } as const
