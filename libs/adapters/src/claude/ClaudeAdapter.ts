import type { ChildProcess } from "node:child_process"
import {
  type CanUseTool,
  type PermissionResult,
  type Query,
  query,
  type SDKMessage,
  type SDKResultMessage
} from "@anthropic-ai/claude-agent-sdk"
import {
  type AgentError,
  AgentProviderError,
  AgentRuntimeUnavailable,
  AgentTaskNotActive,
  HostPathRedaction,
  type RuntimeInfo
} from "@serverfs/domain"
import { Effect, Either, Exit, Fiber, Runtime } from "effect"
import type {
  InteractionEnded,
  ProviderAdapter,
  ReconcileResult,
  RecordedTurn,
  TurnRequest,
  TurnSink
} from "../ProviderAdapter.js"
import {
  answersFor,
  approvalPayload,
  CANCEL_MESSAGE,
  type ClaudeApprovalResolution,
  MAX_ERROR_TEXT,
  permissionResult,
  questionPayload,
  sessionGrant,
  toolCompleted,
  toolStarted,
  turnFailure
} from "./ClaudeMapping.js"
import {
  bundledExecutable,
  childEnvironment,
  groupExists,
  killGroup,
  parseProcessTurnId,
  probeVersion,
  processTurnId,
  resolveOnPath,
  spawnInGroup,
  startTicks
} from "./ClaudeProcess.js"
import { InputQueue } from "./InputQueue.js"

/**
 * The Claude adapter (spec v0.3 §4.2, §18–§20; bridge-internals §7 "Claude", §10): one task turn
 * is one `query()` of the official Agent SDK over streaming input, running the administrator's
 * Claude Code CLI in the user's native environment — their settings (user, project, local), the
 * `claude_code` system prompt, their permission mode, rules, hooks and MCP servers. Only what
 * reaches Claude's ask path comes to ServerFS, through `canUseTool`: approvals and
 * AskUserQuestion, relayed durably through the sink. See src/claude/README.md for every option
 * and decision.
 */
export interface ClaudeAdapterOptions {
  /** SERVERFS_CLAUDE_BIN: a command name looked up on the environment's PATH, or an absolute path. */
  readonly claudeBin: string
  /** SERVERFS_CLAUDE_USE_BUNDLED_CLI: run the binary the SDK package ships instead. */
  readonly useBundledCli: boolean
  /** SERVERFS_CLAUDE_PROBE_TIMEOUT_SECONDS: the bound of `claude --version`. */
  readonly probeTimeoutSeconds: number
  /** The bridge's environment; the CLI gets it less the ServerFS configuration variables. */
  readonly environment: Readonly<Record<string, string | undefined>>
}

interface Turn {
  readonly taskId: string
  readonly query: Query
  readonly input: InputQueue
  child: ChildProcess | undefined
  exited: boolean
  /** The bridge asked this turn to stop (cancel); its end is not a provider failure. */
  cancelRequested: boolean
  stderr: string
  readonly callbacks: Set<Fiber.RuntimeFiber<PermissionResult>>
}

const MAX_STDERR = 8192
const DRAIN_MILLIS = 5000
const EXIT_MILLIS = 3000

const providerError = (message: string) => new AgentProviderError({ message })

const deny = (message: string, interrupt = false): PermissionResult =>
  interrupt ? { behavior: "deny", message, interrupt: true } : { behavior: "deny", message }

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

const waitFor = async (condition: () => boolean, millis: number): Promise<boolean> => {
  const deadline = Date.now() + millis
  while (!condition()) {
    if (Date.now() > deadline) return false
    await sleep(25)
  }
  return true
}

export const makeClaudeAdapter = (options: ClaudeAdapterOptions): Effect.Effect<ProviderAdapter> =>
  Effect.sync(() => {
    const active = new Map<string, Turn>()
    /** Tasks whose CLI was seen to exit in this process (proven stopped). */
    const stopped = new Set<string>()
    const environment = childEnvironment(options.environment)

    const executable = (): string | undefined =>
      options.useBundledCli ? bundledExecutable() : resolveOnPath(options.claudeBin, environment.PATH)

    const unavailable = (detail: string): RuntimeInfo => ({ name: "claude", available: false, detail })

    const probe = (): Effect.Effect<RuntimeInfo> =>
      Effect.suspend(() => {
        const bin = executable()
        if (bin === undefined) {
          return Effect.succeed(
            unavailable(
              options.useBundledCli
                ? "the Agent SDK's bundled Claude Code binary is not installed"
                : "the Claude Code CLI (SERVERFS_CLAUDE_BIN) was not found"
            )
          )
        }
        return Effect.map(
          Effect.promise(() => probeVersion(bin, environment, options.probeTimeoutSeconds)),
          (probed): RuntimeInfo =>
            "problem" in probed
              ? unavailable(probed.problem)
              : {
                  name: "claude",
                  available: true,
                  version: probed.version,
                  persistent_session: true,
                  live_steer: false,
                  interactive_approval: true,
                  interactive_question: true,
                  in_flight_recovery: "session-resume"
                }
        )
      })

    // ---- the permission callback ------------------------------------------------------------
    const relay = (request: TurnRequest, sink: TurnSink) => {
      const approval = (
        tool: string,
        input: Record<string, unknown>,
        context: Parameters<CanUseTool>[2]
      ): Effect.Effect<PermissionResult, InteractionEnded> =>
        Effect.suspend(() => {
          const grant = sessionGrant(context)
          const payload = approvalPayload(tool, input, context, request, grant.length > 0)
          return Effect.map(sink.requestApproval(payload), (resolution) =>
            permissionResult(input, resolution as ClaudeApprovalResolution, grant)
          )
        })

      const question = (input: Record<string, unknown>): Effect.Effect<PermissionResult, InteractionEnded> =>
        Effect.suspend(() => {
          const parsed = questionPayload(input)
          if (typeof parsed === "string") {
            return Effect.succeed(deny(`ServerFS cannot relay this question (${parsed}).`))
          }
          return Effect.map(
            sink.requestQuestion(parsed.payload),
            (resolution): PermissionResult => ({
              behavior: "allow",
              updatedInput: { ...input, answers: answersFor(parsed.questions, resolution) }
            })
          )
        })

      return (tool: string, input: Record<string, unknown>, context: Parameters<CanUseTool>[2]) =>
        (tool === "AskUserQuestion" ? question(input) : approval(tool, input, context)).pipe(
          // The interaction ended without an answer (cancelled, expired) or the relay broke: stop.
          Effect.catchAllCause(() => Effect.succeed(deny(CANCEL_MESSAGE, true)))
        )
    }

    const canUseToolFor = (
      turnRef: { current: Turn | undefined },
      runtime: Runtime.Runtime<never>,
      request: TurnRequest,
      sink: TurnSink
    ): CanUseTool => {
      const decide = relay(request, sink)
      return (tool, input, context) => {
        const turn = turnRef.current
        if (turn === undefined || context.signal.aborted) return Promise.resolve(deny(CANCEL_MESSAGE, true))
        const fiber = Runtime.runFork(runtime)(decide(tool, input, context))
        turn.callbacks.add(fiber)
        // Claude withdrew the request (interrupt, end of turn): the pending interaction goes stale.
        const onAbort = () => {
          Runtime.runFork(runtime)(Fiber.interrupt(fiber))
        }
        context.signal.addEventListener("abort", onAbort, { once: true })
        return new Promise<PermissionResult>((resolve) => {
          fiber.addObserver((exit) => {
            turn.callbacks.delete(fiber)
            context.signal.removeEventListener("abort", onAbort)
            resolve(Exit.isSuccess(exit) ? exit.value : deny(CANCEL_MESSAGE, true))
          })
        })
      }
    }

    // ---- one turn ------------------------------------------------------------------------------
    const start = (
      bin: string,
      request: TurnRequest,
      sink: TurnSink,
      runtime: Runtime.Runtime<never>
    ): Turn => {
      const turnRef: { current: Turn | undefined } = { current: undefined }
      const input = new InputQueue()
      const onSpawn = (child: ChildProcess) => {
        const turn = turnRef.current
        if (turn !== undefined) turn.child = child
        child.once("exit", () => {
          if (turnRef.current !== undefined) turnRef.current.exited = true
        })
        // Recorded at once: a bridge that dies before init can still prove this CLI gone later.
        if (child.pid !== undefined)
          Runtime.runFork(runtime)(sink.nativeIds({ turnId: processTurnId(child.pid) }))
      }
      const onStderr = (text: string) => {
        const turn = turnRef.current
        if (turn !== undefined) turn.stderr = (turn.stderr + text).slice(-MAX_STDERR)
      }
      const q = query({
        prompt: input,
        options: {
          cwd: request.cwd,
          pathToClaudeCodeExecutable: bin,
          env: environment,
          // The native Claude Code context (spec §18): the user's settings and CLAUDE.md files,
          // and Claude Code's own system prompt. No permission mode, tool list, MCP list or
          // sandbox of ServerFS's: what the user's settings say is what applies.
          settingSources: ["user", "project", "local"],
          systemPrompt: { type: "preset", preset: "claude_code" },
          canUseTool: canUseToolFor(turnRef, runtime, request, sink),
          spawnClaudeCodeProcess: (spawnOptions) => spawnInGroup(spawnOptions, onSpawn, onStderr),
          ...(request.model === null ? {} : { model: request.model }),
          ...(request.resume === null ? {} : { resume: request.resume.sessionId })
        }
      })
      const turn: Turn = {
        taskId: request.taskId,
        query: q,
        input,
        child: undefined,
        exited: false,
        cancelRequested: false,
        stderr: "",
        callbacks: new Set()
      }
      turnRef.current = turn
      input.push(request.prompt)
      return turn
    }

    /** End a turn: close the input, let the CLI exit (bounded), then make sure its group is gone. */
    const stop = (turn: Turn): Effect.Effect<void> =>
      Effect.promise(async () => {
        turn.input.end()
        for (const fiber of turn.callbacks) fiber.unsafeInterruptAsFork(fiber.id())
        // Drain: the SDK delivers what is left and ends when the CLI exits. After an error result
        // its next() throws ("Claude Code returned an error result"): that is expected here.
        // One deadline timer for the whole drain, cleared once it is over.
        let expired = false
        let timer: ReturnType<typeof setTimeout> | undefined
        const deadline = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => {
            expired = true
            resolve("timeout")
          }, DRAIN_MILLIS)
        })
        try {
          while (!expired) {
            const step = await Promise.race([
              turn.query.next().then(
                (r) => (r.done === true ? "done" : "more"),
                () => "done"
              ),
              deadline
            ])
            if (step !== "more") break
          }
        } finally {
          clearTimeout(timer)
        }
        if (!turn.exited) {
          turn.query.close()
          const pid = turn.child?.pid
          if (pid !== undefined) {
            killGroup(pid, "SIGTERM")
            if (!(await waitFor(() => turn.exited, EXIT_MILLIS))) killGroup(pid, "SIGKILL")
          }
          await waitFor(() => turn.exited, EXIT_MILLIS)
        }
        if (turn.exited || turn.child === undefined) stopped.add(turn.taskId)
        active.delete(turn.taskId)
      })

    const drive = (turn: Turn, request: TurnRequest, sink: TurnSink) =>
      Effect.gen(function* () {
        const tools = new Map<string, string>()
        let sessionId: string | undefined
        let lastText = ""
        let result: SDKResultMessage | undefined
        let thrown: unknown
        for (;;) {
          const step = yield* Effect.tryPromise({
            try: () => turn.query.next(),
            catch: (error) => ({ thrown: error })
          }).pipe(Effect.either)
          if (Either.isLeft(step)) {
            thrown = step.left.thrown
            break
          }
          if (step.right.done === true) break
          const message: SDKMessage = step.right.value
          if (message.type === "system" && message.subtype === "init") {
            if (sessionId !== message.session_id) {
              const first = sessionId === undefined
              sessionId = message.session_id
              yield* sink.nativeIds({ sessionId })
              if (first) {
                yield* sink.event("turn.started", {
                  ...(request.resume === null ? {} : { continued: true }),
                  permission_mode: message.permissionMode,
                  claude_code_version: message.claude_code_version
                })
              }
            }
          } else if (message.type === "system" && message.subtype === "api_retry") {
            yield* sink.event("provider.error", {
              message: `Messages API error${message.error_status === null ? "" : ` ${message.error_status}`} (${message.error})`,
              will_retry: true
            })
          } else if (message.type === "assistant" && message.error !== undefined) {
            // A synthetic message for an API failure: reported as such, not as the agent's words.
            yield* sink.event("provider.error", {
              message: `Messages API error (${message.error})`,
              will_retry: false
            })
          } else if (message.type === "assistant" && message.parent_tool_use_id === null) {
            for (const block of message.message.content) {
              if (block.type === "text" && block.text.trim() !== "") {
                lastText = block.text
                yield* sink.event("agent.message", { text: block.text })
              } else if (block.type === "tool_use") {
                tools.set(block.id, block.name)
                const started = toolStarted(
                  block.name,
                  block.id,
                  (block.input ?? {}) as Record<string, unknown>
                )
                yield* sink.event(started.type, started.payload)
              }
            }
          } else if (message.type === "user" && message.parent_tool_use_id === null) {
            const content = message.message.content
            if (Array.isArray(content)) {
              for (const block of content) {
                if (typeof block === "object" && block !== null && block.type === "tool_result") {
                  const done = toolCompleted(
                    tools.get(block.tool_use_id),
                    block.tool_use_id,
                    block.is_error === true
                  )
                  yield* sink.event(done.type, done.payload)
                }
              }
            }
          } else if (message.type === "result") {
            result = message
            break
          }
        }
        if (
          result !== undefined &&
          result.subtype === "success" &&
          !result.is_error &&
          !turn.cancelRequested
        ) {
          return { finalText: result.result !== "" ? result.result : lastText }
        }
        return yield* turnFailure(
          {
            cancelRequested: turn.cancelRequested,
            resumed: request.resume !== null,
            result,
            thrown,
            stderr: turn.stderr
          },
          new HostPathRedaction(request.workdirRoot)
        )
      })

    const adapter: ProviderAdapter = {
      name: "claude",
      inFlightRecovery: "session-resume",
      probe,
      run: (request, sink) =>
        Effect.gen(function* () {
          const bin = executable()
          if (bin === undefined) {
            return yield* new AgentRuntimeUnavailable({ message: "the Claude Code CLI is not available" })
          }
          const runtime = yield* Effect.runtime<never>()
          return yield* Effect.acquireUseRelease(
            Effect.try({
              try: () => {
                stopped.delete(request.taskId)
                const turn = start(bin, request, sink, runtime)
                active.set(request.taskId, turn)
                return turn
              },
              catch: (error) =>
                providerError(
                  `the Claude Agent SDK refused to start: ${new HostPathRedaction(request.workdirRoot).message(error instanceof Error ? error.message : String(error), MAX_ERROR_TEXT)}`
                )
            }),
            (turn) => drive(turn, request, sink),
            (turn) => stop(turn)
          )
        }),
      steer: (taskId) =>
        Effect.suspend(
          (): Effect.Effect<never, AgentError> =>
            active.has(taskId)
              ? Effect.fail(
                  providerError(
                    "live steering is not enabled for Claude: a message sent while Claude is answering is queued as a new turn instead of steering it; cancel and continue with continue_from_task_id instead"
                  )
                )
              : Effect.fail(new AgentTaskNotActive({ message: "the task has no active turn" }))
        ),
      cancel: (taskId) =>
        Effect.suspend(() => {
          const turn = active.get(taskId)
          if (turn === undefined) return Effect.void
          turn.cancelRequested = true
          return Effect.tryPromise({
            try: () => turn.query.interrupt(),
            catch: () => providerError("Claude Code did not accept the interrupt")
          }).pipe(Effect.asVoid)
        }),
      reconcile: (turn) => Effect.promise(() => reconcile(turn)),
      close: () =>
        Effect.sync(() => {
          for (const turn of active.values()) {
            turn.input.end()
            turn.query.close()
            const pid = turn.child?.pid
            if (pid !== undefined) killGroup(pid, "SIGKILL")
          }
        })
    }

    /**
     * bridge-internals §10 for Claude, made provable where it can be: a turn of this process is
     * live or was seen to stop; a turn of an earlier bridge process is judged by its CLI's process
     * group (recorded as the native turn id). A group that still runs belongs to a CLI whose
     * controlling bridge is gone — nobody can answer or steer it any more — so it is stopped
     * before the answer is given. Without that record the state is unknown.
     */
    const reconcile = async (turn: RecordedTurn): Promise<ReconcileResult> => {
      const resumable = turn.sessionId === null ? "NOT_RECOVERABLE" : "SESSION_RESUMABLE"
      if (active.has(turn.taskId)) {
        return {
          status: "UNKNOWN",
          providerActive: true,
          detail: "the turn is running in this bridge process"
        }
      }
      if (stopped.has(turn.taskId)) {
        return {
          status: resumable,
          providerActive: false,
          detail: "the turn's CLI exited in this bridge process"
        }
      }
      const recorded = parseProcessTurnId(turn.turnId)
      if (recorded === undefined) {
        return { status: resumable, providerActive: null, detail: "no record of the turn's CLI process" }
      }
      const exists = groupExists(recorded.pid)
      if (exists === true) {
        if (recorded.ticks === "?") {
          return {
            status: "UNKNOWN",
            providerActive: null,
            detail: "the CLI's process group cannot be identified"
          }
        }
        const leader = startTicks(recorded.pid)
        // A live leader with another start time is a recycled pid: not ours to stop.
        if (leader !== undefined && leader !== recorded.ticks) {
          return { status: "UNKNOWN", providerActive: null, detail: "the CLI's process id was reused" }
        }
        killGroup(recorded.pid, "SIGKILL")
        if (!(await waitFor(() => groupExists(recorded.pid) === false, EXIT_MILLIS))) {
          return {
            status: "UNKNOWN",
            providerActive: null,
            detail: "the previous CLI's process group did not stop"
          }
        }
        return { status: resumable, providerActive: false, detail: "the previous bridge's CLI was stopped" }
      }
      if (exists === false) {
        return { status: resumable, providerActive: false, detail: "the turn's CLI process group is gone" }
      }
      return { status: "UNKNOWN", providerActive: null, detail: "the CLI's process group cannot be checked" }
    }

    return adapter
  })
