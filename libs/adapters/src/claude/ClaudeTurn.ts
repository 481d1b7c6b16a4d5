import type { ChildProcess } from "node:child_process"
import { type PermissionResult, type Query, query } from "@anthropic-ai/claude-agent-sdk"
import {
  type AgentError,
  AgentProviderError,
  AgentRuntimeUnavailable,
  HostPathRedaction
} from "@serverfs/domain"
import { Deferred, type Duration, Effect, Either, Exit, FiberSet } from "effect"
import type { TurnOutcome, TurnRequest, TurnSink } from "../ProviderAdapter.js"
import {
  MAX_ERROR_TEXT,
  type ResultSummary,
  toolCompleted,
  toolStarted,
  turnFailure
} from "./ClaudeMapping.js"
import { decodeTurnMessage } from "./ClaudeMessages.js"
import { canUseToolFor, type RunRelay } from "./ClaudePermissions.js"
import { killGroup, processTurnId, spawnInGroup } from "./ClaudeProcess.js"
import { InputQueue } from "./InputQueue.js"

/**
 * One task turn = one `query()` of the Agent SDK over streaming input (spec v0.3 §18–§20),
 * running the administrator's Claude Code CLI in the user's native environment (their settings,
 * the `claude_code` system prompt, their permission mode, rules, hooks and MCP servers). The turn
 * is acquired in the run's scope and released by `stop`: input closed, pending asks interrupted,
 * the SDK drained (bounded), the CLI's process group stopped (TERM, then KILL) — in Effect, on
 * the child's exit event, without polling.
 */
export interface ClaudeTurn {
  readonly taskId: string
  readonly query: Query
  readonly input: InputQueue
  readonly process: CliProcess
  /** The bridge asked this turn to stop (cancel); its end is not a provider failure. */
  cancelRequested: boolean
}

/** The CLI the SDK spawned for the turn, as its events report it. */
interface CliProcess {
  child: ChildProcess | undefined
  /** Done on the child's exit. */
  readonly exited: Deferred.Deferred<void>
  stderr: string
}

/** The turns this adapter runs, and the tasks whose CLI was seen to exit here (proven stopped). */
export interface ClaudeTurns {
  readonly active: Map<string, ClaudeTurn>
  readonly stopped: Set<string>
}

export interface ClaudeTurnDeps {
  readonly turns: ClaudeTurns
  /** The CLI to run, if there is one. */
  readonly executable: () => string | undefined
  readonly environment: Record<string, string | undefined>
  /** Fire-and-forget work of the adapter (the spawn's native id record), in the adapter's scope. */
  readonly background: FiberSet.FiberSet
}

const MAX_STDERR = 8192
const DRAIN = "5 seconds"
const EXIT = "3 seconds"

const providerError = (message: string) => new AgentProviderError({ message })

/**
 * Where the SDK's callbacks fork their fibers. Captured outside the turn's acquisition: a
 * runtime captured inside `acquireRelease`'s acquire is uninterruptible, and so would every ask
 * forked with it be.
 */
interface Forks {
  readonly runRelay: RunRelay
  readonly runBackground: (effect: Effect.Effect<void>) => unknown
}

/** Start the turn: the SDK spawns the CLI on its first read. */
const start = (deps: ClaudeTurnDeps, bin: string, request: TurnRequest, sink: TurnSink, forks: Forks) =>
  Effect.gen(function* () {
    const { runRelay, runBackground } = forks
    const process: CliProcess = { child: undefined, exited: yield* Deferred.make<void>(), stderr: "" }
    const onSpawn = (child: ChildProcess) => {
      process.child = child
      child.once("exit", () => Deferred.unsafeDone(process.exited, Exit.void))
      // Recorded at once: a bridge that dies before init can still prove this CLI gone later.
      if (child.pid !== undefined) runBackground(sink.nativeIds({ turnId: processTurnId(child.pid) }))
    }
    const onStderr = (text: string) => {
      process.stderr = (process.stderr + text).slice(-MAX_STDERR)
    }
    const input = new InputQueue()
    // The SDK refuses bad options by throwing an Error: the provider's failure, not ours; anything
    // else thrown is a defect (rethrown inside `suspend`).
    const q = yield* Effect.suspend(() => {
      try {
        return Effect.succeed(
          query({
            prompt: input,
            options: {
              cwd: request.cwd,
              pathToClaudeCodeExecutable: bin,
              env: deps.environment,
              // The native Claude Code context (spec §18): the user's settings and CLAUDE.md files,
              // and Claude Code's own system prompt. No permission mode, tool list, MCP list or
              // sandbox of ServerFS's: what the user's settings say is what applies.
              settingSources: ["user", "project", "local"],
              systemPrompt: { type: "preset", preset: "claude_code" },
              canUseTool: canUseToolFor(request, sink, (effect) => runRelay(effect)),
              spawnClaudeCodeProcess: (spawnOptions) => spawnInGroup(spawnOptions, onSpawn, onStderr),
              ...(request.model === null ? {} : { model: request.model }),
              ...(request.resume === null ? {} : { resume: request.resume.sessionId })
            }
          })
        )
      } catch (error) {
        if (!(error instanceof Error)) throw error
        const reason = new HostPathRedaction(request.workdirRoot).message(error.message, MAX_ERROR_TEXT)
        return Effect.fail(providerError(`the Claude Agent SDK refused to start: ${reason}`))
      }
    })
    const turn: ClaudeTurn = { taskId: request.taskId, query: q, input, process, cancelRequested: false }
    deps.turns.stopped.delete(request.taskId)
    deps.turns.active.set(request.taskId, turn)
    input.push(request.prompt)
    return turn
  })

/** Did the CLI exit within `bound`? */
const exitedWithin = (turn: ClaudeTurn, bound: Duration.DurationInput) =>
  Deferred.await(turn.process.exited).pipe(
    Effect.timeout(bound),
    Effect.as(true),
    Effect.catchTag("TimeoutException", () => Effect.succeed(false))
  )

/**
 * The SDK delivers what is left and ends when the CLI exits. After an error result its next()
 * rejects ("Claude Code returned an error result"): that is an end too.
 */
const drain = (q: Query) =>
  Effect.promise(() =>
    q.next().then(
      (step) => step.done === true,
      () => true
    )
  ).pipe(Effect.repeat({ until: (ended) => ended }))

/**
 * End a turn: close the input, let the CLI exit (bounded), then make sure its group is gone. A
 * turn the bridge stopped (its end is committed, `cancel` has interrupted the query) is sent
 * SIGTERM at once: left to exit on its closed input the CLI took ~0.9 s (measured under load),
 * all that time holding the workdir's lease; on SIGTERM it runs its own exit handlers in about
 * half that, and its session stays resumable (apps/mcp/test/claude/claude.test.ts continues a
 * cancelled task).
 */
const stop = (deps: ClaudeTurnDeps, turn: ClaudeTurn, callbacks: FiberSet.FiberSet<PermissionResult>) =>
  Effect.gen(function* () {
    turn.input.end()
    yield* FiberSet.clear(callbacks)
    const pid = turn.process.child?.pid
    if (turn.cancelRequested && pid !== undefined) killGroup(pid, "SIGTERM")
    yield* drain(turn.query).pipe(Effect.timeout(DRAIN), Effect.ignore)
    if (!(yield* Deferred.isDone(turn.process.exited))) {
      turn.query.close()
      if (pid !== undefined) {
        killGroup(pid, "SIGTERM")
        if (!(yield* exitedWithin(turn, EXIT))) killGroup(pid, "SIGKILL")
      }
      yield* exitedWithin(turn, EXIT)
    }
    if ((yield* Deferred.isDone(turn.process.exited)) || turn.process.child === undefined) {
      deps.turns.stopped.add(turn.taskId)
    }
    if (deps.turns.active.get(turn.taskId) === turn) deps.turns.active.delete(turn.taskId)
  })

/** Follow the turn's messages to its result; the normalized events go to the sink. */
const drive = (turn: ClaudeTurn, request: TurnRequest, sink: TurnSink) =>
  Effect.gen(function* () {
    const tools = new Map<string, string>()
    let sessionId: string | undefined
    let lastText = ""
    let result: ResultSummary | undefined
    let thrown: unknown
    for (;;) {
      // A rejected next() is how the SDK reports a broken CLI: kept for the failure's text.
      const step = yield* Effect.promise(() =>
        turn.query.next().then(
          (next) => Either.right(next),
          (error: unknown) => Either.left(error)
        )
      )
      if (Either.isLeft(step)) {
        thrown = step.left
        break
      }
      if (step.right.done === true) break
      const message = decodeTurnMessage(step.right.value)
      switch (message._tag) {
        case "Init":
          if (sessionId !== message.sessionId) {
            const first = sessionId === undefined
            sessionId = message.sessionId
            yield* sink.nativeIds({ sessionId })
            if (first) {
              yield* sink.event("turn.started", {
                ...(request.resume === null ? {} : { continued: true }),
                permission_mode: message.permissionMode,
                claude_code_version: message.claudeCodeVersion
              })
            }
          }
          break
        case "ApiRetry":
          yield* sink.event("provider.error", {
            message: `Messages API error${message.status === null ? "" : ` ${message.status}`} (${message.error})`,
            will_retry: true
          })
          break
        case "ApiError":
          // A synthetic message for an API failure: reported as such, not as the agent's words.
          yield* sink.event("provider.error", {
            message: `Messages API error (${message.error})`,
            will_retry: false
          })
          break
        case "Assistant":
          for (const block of message.blocks) {
            if (block._tag === "Text") {
              lastText = block.text
              yield* sink.event("agent.message", { text: block.text })
            } else {
              tools.set(block.id, block.name)
              const started = toolStarted(block.name, block.id, block.input)
              yield* sink.event(started.type, started.payload)
            }
          }
          break
        case "ToolResults":
          for (const r of message.results) {
            const done = toolCompleted(tools.get(r.toolUseId), r.toolUseId, r.isError)
            yield* sink.event(done.type, done.payload)
          }
          break
        case "Result":
          result = message.result
          break
        case "Other":
          break
      }
      if (result !== undefined) break
    }
    if (result !== undefined && result._tag === "Success" && !result.isError && !turn.cancelRequested) {
      return { finalText: result.text !== "" ? result.text : lastText }
    }
    return yield* turnFailure(
      {
        cancelRequested: turn.cancelRequested,
        resumed: request.resume !== null,
        result,
        thrown,
        stderr: turn.process.stderr
      },
      new HostPathRedaction(request.workdirRoot)
    )
  })

export const makeClaudeRun =
  (deps: ClaudeTurnDeps) =>
  (request: TurnRequest, sink: TurnSink): Effect.Effect<TurnOutcome, AgentError> =>
    Effect.scoped(
      Effect.gen(function* () {
        const bin = deps.executable()
        if (bin === undefined) {
          return yield* new AgentRuntimeUnavailable({ message: "the Claude Code CLI is not available" })
        }
        const callbacks = yield* FiberSet.make<PermissionResult>()
        const forks: Forks = {
          runRelay: yield* FiberSet.runtime(callbacks)<never>(),
          runBackground: yield* FiberSet.runtime(deps.background)<never>()
        }
        const turn = yield* Effect.acquireRelease(start(deps, bin, request, sink, forks), (turn) =>
          stop(deps, turn, callbacks)
        )
        return yield* drive(turn, request, sink)
      })
    )
