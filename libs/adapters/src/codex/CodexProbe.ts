import type { RuntimeInfo } from "@serverfs/domain"
import { Effect } from "effect"
import type { CodexCli } from "./CodexCli.js"
import { codexInFlightRecovery } from "./CodexRestartAttach.js"
import { controlSocketExists } from "./CodexTransport.js"
import { CODEX_PROTOCOL_VERSION } from "./protocol/Version.js"

/**
 * Codex's availability and capabilities (spec v0.3 §8), without starting anything: a probe never
 * autostarts the daemon — it reads the CLI's version, or the running daemon's user agent.
 */
const info = (available: boolean, version: string | null, detail?: string): RuntimeInfo => ({
  name: "codex",
  available,
  version,
  persistent_session: true,
  live_steer: true,
  interactive_approval: true,
  interactive_question: true,
  in_flight_recovery: "session-resume",
  model_override: true,
  model_discovery: "runtime_catalog",
  ...(detail === undefined ? {} : { detail })
})

/** `<originator>/<version> …` → the version. */
const userAgentVersion = (userAgent: string): string | null => /^[^/\s]+\/(\S+)/.exec(userAgent)?.[1] ?? null

/** A Codex whose protocol differs from the generated types' is usable, with a warning. */
const mismatch = (version: string | null): string | undefined =>
  version !== null && version !== CODEX_PROTOCOL_VERSION
    ? `the protocol types were generated for Codex ${CODEX_PROTOCOL_VERSION}`
    : undefined

const UNRUNNABLE = "the codex binary could not be run"

export const makeCodexProbe =
  (cli: CodexCli, options: { readonly transport: "daemon" | "stdio"; readonly autostart: boolean }) =>
  (): Effect.Effect<RuntimeInfo> =>
    Effect.map(probeWith(cli, options), (info) => ({
      ...info,
      in_flight_recovery: codexInFlightRecovery(options.transport)
    }))

const probeWith = (
  cli: CodexCli,
  options: { readonly transport: "daemon" | "stdio"; readonly autostart: boolean }
): Effect.Effect<RuntimeInfo> => {
  if (options.transport === "stdio") {
    return cli.cliVersion.pipe(
      Effect.map((version) => info(true, version, mismatch(version))),
      Effect.catchTag("CodexUnavailable", () => Effect.succeed(info(false, null, UNRUNNABLE)))
    )
  }
  if (!controlSocketExists(cli.socketPath)) {
    return options.autostart
      ? cli.cliVersion.pipe(
          Effect.map((version) =>
            info(true, version, "the Codex daemon is not running; the first task starts it (autostart)")
          ),
          Effect.catchTag("CodexUnavailable", () => Effect.succeed(info(false, null, UNRUNNABLE)))
        )
      : Effect.succeed(info(false, null, "the Codex app-server daemon is not running"))
  }
  return Effect.scoped(cli.connect).pipe(
    Effect.map((connection) => {
      const version = userAgentVersion(connection.userAgent)
      return info(true, version, mismatch(version))
    }),
    Effect.catchTag("CodexUnavailable", (e) => Effect.succeed(info(false, null, e.reason)))
  )
}
