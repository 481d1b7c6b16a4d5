import { spawn } from "node:child_process"
import type * as net from "node:net"
import { Deferred, type Duration, Effect, Exit, Scope } from "effect"
import { childEnvironment } from "../ChildEnvironment.js"
import {
  type CodexConnection,
  CodexUnavailable,
  controlSocketExists,
  controlSocketPath,
  openDaemonConnection,
  openStdioConnection
} from "./CodexTransport.js"

/**
 * The Codex CLI and the managed daemon's lifecycle, as ServerFS uses them (spec v0.3 §4.1, §28):
 * short bounded CLI commands (`--version`, `app-server daemon start`), and the connections a
 * probe, a turn or a reconcile opens — each a scoped resource. Autostart is the only lifecycle
 * command ServerFS ever runs, and never from a probe.
 */
export interface CodexCliOptions {
  readonly bin: string
  readonly codexHome: string
  readonly transport: "daemon" | "stdio"
  readonly autostart: boolean
  readonly requestTimeoutSeconds: number
  readonly connectSocket?: (socketPath: string) => net.Socket
  readonly env?: NodeJS.ProcessEnv
}

const SERVICE_VERSION = "0.3.0"
const CLIENT = {
  name: "serverfs-agent-bridge",
  title: "ServerFS Agent Bridge",
  version: SERVICE_VERSION
} as const
const AUTOSTART_TIMEOUT = "30 seconds"
/** Token-level streams ServerFS never records (spec §17: no token-by-token deltas). */
const OPT_OUT = [
  "item/agentMessage/delta",
  "item/plan/delta",
  "item/reasoning/summaryTextDelta",
  "item/reasoning/summaryPartAdded",
  "item/reasoning/textDelta",
  "item/commandExecution/outputDelta",
  "item/fileChange/outputDelta",
  "thread/tokenUsage/updated",
  "account/rateLimits/updated"
]

/**
 * Run a short Codex CLI command; its stdout on exit code 0. The child is acquired in a scope of
 * its own — a timeout or an interruption kills it, whatever the command was doing — and watched
 * from the moment it is spawned (its outcome lands in a Deferred), so no event can be missed.
 */
export const runCli = (
  bin: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  timeout: Duration.DurationInput
): Effect.Effect<string, CodexUnavailable> =>
  Effect.scoped(
    Effect.gen(function* () {
      const outcome = yield* Deferred.make<string, CodexUnavailable>()
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          const child = spawn(bin, [...args], { env, stdio: ["ignore", "pipe", "pipe"] })
          let stdout = ""
          child.stdout.on("data", (chunk: Buffer) => {
            stdout += chunk.toString("utf8")
          })
          child.stderr.resume()
          child.once("error", () =>
            Deferred.unsafeDone(
              outcome,
              Exit.fail(new CodexUnavailable({ reason: "the codex binary could not be run" }))
            )
          )
          child.once("close", (code) =>
            Deferred.unsafeDone(
              outcome,
              code === 0
                ? Exit.succeed(stdout)
                : Exit.fail(new CodexUnavailable({ reason: `codex ${args.join(" ")} exited with ${code}` }))
            )
          )
          return child
        }),
        (child) =>
          Effect.sync(() => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
          })
      )
      return yield* Deferred.await(outcome).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new CodexUnavailable({ reason: `codex ${args.join(" ")} timed out` })
        })
      )
    })
  )

/** A connection in a scope of its own (replaced on reconnect, closed by the run's finalizer). */
export interface OwnedConnection {
  readonly connection: CodexConnection
  readonly scope: Scope.CloseableScope
}

export interface CodexCli {
  /** The environment Codex commands run with (CODEX_HOME set). */
  readonly env: NodeJS.ProcessEnv
  readonly socketPath: string
  readonly requestTimeout: Duration.DurationInput
  /** `codex --version`: the CLI's version, or null when it prints none. */
  readonly cliVersion: Effect.Effect<string | null, CodexUnavailable>
  /** A new initialized connection (the daemon's socket, or a stdio child). */
  readonly connect: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope>
  /** `connect`, starting the daemon first when autostart is on and none runs. */
  readonly connectForTask: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope>
  /** `how` in a scope of its own, handed out with it. */
  readonly openOwned: (
    how: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope>
  ) => Effect.Effect<OwnedConnection, CodexUnavailable>
}

export const makeCodexCli = (options: CodexCliOptions): Effect.Effect<CodexCli> =>
  Effect.gen(function* () {
    // ServerFS's own variables stripped (one rule with Claude's): the stdio child, the autostarted
    // daemon and the short CLI commands all run with this environment.
    const env: NodeJS.ProcessEnv = {
      ...childEnvironment(options.env ?? process.env),
      CODEX_HOME: options.codexHome
    }
    const socketPath = controlSocketPath(options.codexHome)
    const requestTimeout = `${Math.max(1, options.requestTimeoutSeconds * 1000)} millis` as const
    const autostartLock = yield* Effect.makeSemaphore(1)

    const connectionOptions = {
      requestTimeoutSeconds: options.requestTimeoutSeconds,
      client: CLIENT,
      optOutNotifications: OPT_OUT
    }

    const connect: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope> =
      options.transport === "daemon"
        ? openDaemonConnection({
            ...connectionOptions,
            socketPath,
            ...(options.connectSocket === undefined ? {} : { connectSocket: options.connectSocket })
          })
        : openStdioConnection({ ...connectionOptions, bin: options.bin, env })

    /** `codex app-server daemon start`, once at a time (concurrent tasks start one daemon). */
    const startDaemon = autostartLock.withPermits(1)(
      Effect.suspend(() =>
        controlSocketExists(socketPath)
          ? Effect.void
          : runCli(options.bin, ["app-server", "daemon", "start"], env, AUTOSTART_TIMEOUT).pipe(Effect.asVoid)
      )
    )

    const connectForTask: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope> =
      options.transport === "daemon" && options.autostart
        ? connect.pipe(
            Effect.catchTag("CodexUnavailable", (error) =>
              controlSocketExists(socketPath) ? Effect.fail(error) : Effect.zipRight(startDaemon, connect)
            )
          )
        : connect

    /** Whatever ends the opening (a failure, an interruption) closes the new scope. */
    const openOwned = (how: Effect.Effect<CodexConnection, CodexUnavailable, Scope.Scope>) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const connection = yield* Scope.extend(how, scope).pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
        return { connection, scope } satisfies OwnedConnection
      })

    const cliVersion = runCli(options.bin, ["--version"], env, requestTimeout).pipe(
      Effect.map((out) => /(\d+\.\d+\.\d+[^\s]*)/.exec(out)?.[1] ?? null)
    )

    return {
      env,
      socketPath,
      requestTimeout,
      cliVersion,
      connect,
      connectForTask,
      openOwned
    } satisfies CodexCli
  })
