import { type AgentError, AgentProviderError, AgentTaskNotActive, type RuntimeInfo } from "@serverfs/domain"
import { type Config, Effect, FiberSet, Layer } from "effect"
import { type ProviderAdapter, ProviderAdapterTag } from "../ProviderAdapter.js"
import { makeClaudeListModels } from "./ClaudeModels.js"
import {
  bundledExecutable,
  childEnvironment,
  killGroup,
  probeVersion,
  resolveOnPath
} from "./ClaudeProcess.js"
import { makeClaudeReconcile } from "./ClaudeReconcile.js"
import { type ClaudeTurns, makeClaudeRun } from "./ClaudeTurn.js"

/**
 * The Claude adapter (spec v0.3 §4.2, §18–§20; bridge-internals §7 "Claude", §10): one task turn
 * is one `query()` of the official Agent SDK (ClaudeTurn), its asks relayed through the sink
 * (ClaudePermissions), its CLI's process group proven gone after a restart (ClaudeReconcile).
 * See src/claude/README.md for every option and decision.
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

const providerError = (message: string) => new AgentProviderError({ message })

/**
 * The adapter, in the caller's scope: the turns' background work runs in that scope, and closing
 * it stops every CLI still running here (the bridge's shutdown).
 */
const make = (options: ClaudeAdapterOptions) =>
  Effect.gen(function* () {
    const turns: ClaudeTurns = { active: new Map(), stopped: new Set() }
    const environment = childEnvironment(options.environment)
    const background = yield* FiberSet.make()

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
          probeVersion(bin, environment, options.probeTimeoutSeconds),
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
                  in_flight_recovery: "session-resume",
                  model_override: true,
                  model_discovery: "current_account"
                }
        )
      })

    const steer = (taskId: string): Effect.Effect<never, AgentError> =>
      Effect.suspend(
        (): Effect.Effect<never, AgentError> =>
          turns.active.has(taskId)
            ? Effect.fail(
                providerError(
                  "live steering is not enabled for Claude: a message sent while Claude is answering is queued as a new turn instead of steering it; cancel and continue with continue_from_task_id instead"
                )
              )
            : Effect.fail(new AgentTaskNotActive({ message: "the task has no active turn" }))
      )

    const cancel = (taskId: string): Effect.Effect<void, AgentError> =>
      Effect.suspend(() => {
        const turn = turns.active.get(taskId)
        if (turn === undefined) return Effect.void
        turn.cancelRequested = true
        // Sent, not awaited: the bridge stops the turn right after this (the CLI is then sent
        // SIGTERM and awaited, see ClaudeTurn `stop`), and the lease goes only once the CLI has
        // exited — waiting for the CLI's acknowledgment first only kept the workdir locked
        // longer (60-300 ms measured). A rejection (the CLI exited meanwhile) changes nothing.
        return Effect.sync(() => {
          turn.query.interrupt().catch(() => undefined)
        })
      })

    /** Bridge shutdown: every CLI still running here is stopped at once (its group with it). */
    const close = (): Effect.Effect<void> =>
      Effect.sync(() => {
        for (const turn of turns.active.values()) {
          turn.input.end()
          turn.query.close()
          const pid = turn.process.child?.pid
          if (pid !== undefined) killGroup(pid, "SIGKILL")
        }
      })
    yield* Effect.addFinalizer(close)

    const adapter: ProviderAdapter = {
      name: "claude",
      inFlightRecovery: "session-resume",
      probe,
      run: makeClaudeRun({ turns, executable, environment, background }),
      steer,
      cancel,
      reconcile: makeClaudeReconcile(turns),
      listModels: makeClaudeListModels({ executable, environment }),
      close
    }
    return adapter
  })

/** The adapter as the port's service, for the lifetime of the layer. */
const layer = (options: ClaudeAdapterOptions): Layer.Layer<ProviderAdapterTag> =>
  Layer.scoped(ProviderAdapterTag, make(options))

/** `layer`, with its options read from configuration. */
const layerConfig = (options: Config.Config<ClaudeAdapterOptions>) =>
  Layer.scoped(ProviderAdapterTag, Effect.flatMap(options, make))

export const ClaudeAdapter = { make, layer, layerConfig } as const

/** `ClaudeAdapter.make`, by the name the bridge and the tests know. */
export const makeClaudeAdapter = make
