import * as os from "node:os"
import * as path from "node:path"
import { RESULT_PREVIEW_BYTES } from "@serverfs/domain"
import { Config, Effect, Either, Option } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import { type Entry, parseEntriesAll, type VariableDoc } from "./GlobalSettings.js"
import { isUnset, lenientFloat, type Parse, strictBool, strictInt } from "./Parsers.js"
import { BASE_DIRECTORY_VARIABLES, DOCUMENTED_DEFAULTS, resolveStateDir } from "./RuntimePaths.js"
import type { Workdir } from "./Workdir.js"
import { runtimeDirectoryProblem } from "./WorkdirOverlap.js"

/**
 * Settings only the Agent Bridge reads (tool-contracts §4.1 "deployment-only variables",
 * bridge-internals §3/§11), from the same environment and .env file as serverfs-mcp: one source
 * of truth. The workdirs, the socket path and the lock directory come from the shared surface.
 */
export interface BridgeSettings {
  readonly stateDir: string
  readonly peerUid: number | null
  readonly peerGid: number | null
  readonly taskTimeoutSeconds: number
  readonly interactionTimeoutSeconds: number
  readonly maxActiveTasks: number
  readonly maxPromptBytes: number
  readonly maxFinalResponseBytes: number
  readonly maxEventBytes: number
  readonly maxEventsPerTask: number
  readonly stateMaxBytes: number
  readonly maxConnections: number
  readonly connectionIdleSeconds: number
  readonly retentionSeconds: number
  readonly resultSpoolThresholdBytes: number
  readonly enableFakeRuntime: boolean
  readonly providerCancelTimeoutSeconds: number
  readonly codexBin: string
  readonly codexHome: string
  readonly codexTransport: "daemon" | "stdio"
  readonly codexAutostart: boolean
  readonly codexRequestTimeoutSeconds: number
  readonly claudeBin: string
  readonly claudeUseBundledCli: boolean
  readonly claudeProbeTimeoutSeconds: number
}

/** The largest final response SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES may allow (and its default). */
export const MAX_SPOOLED_RESULT_BYTES = 8_388_608
/**
 * What a task's result may count against its share: the largest final response this
 * configuration keeps and its preview.
 */
export const resultShareBytes = (settings: Pick<BridgeSettings, "maxFinalResponseBytes">): number =>
  settings.maxFinalResponseBytes + RESULT_PREVIEW_BYTES
/** The least a task's share leaves for its events (never less than one event of the largest size). */
export const MIN_EVENT_SHARE_BYTES = 1_048_576
/** The per-task minimum of the disk budget: twice (half the budget is shared) result plus events. */
export const minimumBytesPerActiveTask = (
  settings: Pick<BridgeSettings, "maxFinalResponseBytes" | "maxEventBytes">
): number => 2 * (resultShareBytes(settings) + Math.max(MIN_EVENT_SHARE_BYTES, settings.maxEventBytes))
/**
 * The largest prompt that may be configured: a submission carries it JSON-escaped (up to six bytes
 * per byte) in one 1 MiB RPC frame.
 */
export const MAX_PROMPT_BYTES_LIMIT = 131_072
/** The largest event that may be configured: the size the events pages and task views were sized for. */
export const MAX_EVENT_BYTES_LIMIT = 65_536

/**
 * One active task's share of the state's disk budget: half the budget divided among the active
 * tasks. What the active tasks may still write is kept free, so at most half the budget is held
 * back from finished tasks even when every task slot is busy.
 */
export const taskShareBytes = (settings: Pick<BridgeSettings, "stateMaxBytes" | "maxActiveTasks">): number =>
  Math.floor(settings.stateMaxBytes / (2 * settings.maxActiveTasks))
/**
 * The largest inline result: task.get must fit one 1 MiB RPC frame with the rest of the task
 * view (manifest, pending request ≤ 64 KiB, preview), so inline results stay well below it.
 */
export const MAX_INLINE_RESULT_BYTES = 524_288

/** The most connections the bridge socket may be configured to hold (each one a descriptor). */
export const MAX_CONNECTIONS_LIMIT = 4096

const atMost =
  (fallback: number, max: number): Parse<number> =>
  (raw) =>
    Either.flatMap(strictInt(fallback)(raw), (n) =>
      n <= max ? Either.right(n) : Either.left(`must be at most ${max}`)
    )

/** An integer within [min, max], `fallback` when unset. */
const within =
  (fallback: number, min: number, max: number, why = ""): Parse<number> =>
  (raw) =>
    Either.flatMap(strictInt(fallback)(raw), (n) =>
      n < min
        ? Either.left(`must be at least ${min}`)
        : n > max
          ? Either.left(`must be at most ${max}${why}`)
          : Either.right(n)
    )

const defaultCodexHome = (): string => process.env.CODEX_HOME ?? path.join(os.homedir(), ".codex")

const codexTransport: Parse<"daemon" | "stdio"> = (raw) => {
  const word = (raw ?? "").trim().toLowerCase()
  if (word === "" || word === "daemon") return Either.right("daemon")
  if (word === "stdio") return Either.right("stdio")
  return Either.left("expected daemon or stdio")
}

/** A command name looked up on PATH, or an absolute path; never a relative path. */
const executable =
  (fallback: string): Parse<string> =>
  (raw) => {
    const value = isUnset(raw) ? fallback : raw.trim()
    return value.includes("/") && !path.isAbsolute(value)
      ? Either.left("must be a command name or an absolute path")
      : Either.right(value)
  }

/** A uid or gid: a non-negative integer, or empty for "the bridge's own". */
const optionalId: Parse<number | null> = (raw) => {
  if (isUnset(raw)) return Either.right(null)
  const t = raw.trim()
  return /^\d+$/.test(t) && Number(t) <= 0xffffffff
    ? Either.right(Number(t))
    : Either.left("expected a numeric id")
}

const absolutePath =
  (fallback: () => string): Parse<string> =>
  (raw) => {
    const value = isUnset(raw) ? fallback() : raw.trim()
    // An unset state directory is resolved later, from the environment (see checkBridgeSettings).
    return value === "" || path.isAbsolute(value)
      ? Either.right(value)
      : Either.left("must be an absolute path")
  }

export const BRIDGE_VARIABLES: { readonly [K in keyof BridgeSettings]: Entry<BridgeSettings[K]> } = {
  stateDir: {
    variable: "SERVERFS_AGENT_BRIDGE_STATE_DIR",
    kind: "absolute path",
    default: DOCUMENTED_DEFAULTS.stateDir,
    // Unset parses to "": checkBridgeSettings resolves the user-scoped default (RuntimePaths.ts).
    parse: absolutePath(() => ""),
    description:
      "Private state of the bridge: state.sqlite3 and results/. Created 0700 (with missing parents); refused if it exists with other owner or looser permissions. With neither this, XDG_STATE_HOME nor HOME absolute, the bridge stops startup."
  },
  peerUid: {
    variable: "SERVERFS_AGENT_PEER_UID",
    kind: "strict int",
    default: "(the bridge's own uid)",
    parse: optionalId,
    description: "The uid a client must have (SO_PEERCRED) to use the bridge socket."
  },
  peerGid: {
    variable: "SERVERFS_AGENT_PEER_GID",
    kind: "strict int",
    default: "(the bridge's own gid)",
    parse: optionalId,
    description:
      "The gid a client must have. Setting it puts the socket and lock directories in shared mode (0750/0660, this group)."
  },
  taskTimeoutSeconds: {
    variable: "SERVERFS_AGENT_TASK_TIMEOUT_SECONDS",
    kind: "strict int",
    default: "7200",
    parse: strictInt(7200),
    description:
      "A task's deadline, frozen at submission; past it the task is interrupted (AGENT_TASK_TIMED_OUT)."
  },
  interactionTimeoutSeconds: {
    variable: "SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS",
    kind: "strict int",
    default: "1800",
    parse: strictInt(1800),
    description:
      "How long an approval or question waits for the human (never beyond the task deadline); then the task is interrupted (AGENT_INTERACTION_TIMED_OUT)."
  },
  maxActiveTasks: {
    variable: "SERVERFS_AGENT_MAX_ACTIVE_TASKS",
    kind: "strict int",
    default: "4",
    parse: strictInt(4),
    description: "Most non-terminal tasks at once (AGENT_TASK_LIMIT_REACHED)."
  },
  maxPromptBytes: {
    variable: "SERVERFS_AGENT_MAX_PROMPT_BYTES",
    kind: "strict int",
    default: "65536",
    parse: within(65_536, 1, MAX_PROMPT_BYTES_LIMIT, ", so that a submission fits one RPC frame"),
    description: `Largest prompt of a submission, in UTF-8 bytes (AGENT_PROMPT_TOO_LARGE); 1 to ${MAX_PROMPT_BYTES_LIMIT}.`
  },
  maxFinalResponseBytes: {
    variable: "SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES",
    kind: "strict int",
    default: "8388608",
    parse: within(MAX_SPOOLED_RESULT_BYTES, 1, MAX_SPOOLED_RESULT_BYTES),
    description: `Largest final response a task may keep, in UTF-8 bytes; a larger one fails the task (AGENT_RESULT_TOO_LARGE). 1 to ${MAX_SPOOLED_RESULT_BYTES}. What get_agent_task returns inline is bounded separately by SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES (spec v0.3 §23's 262144); the rest is read with read_agent_task_result.`
  },
  maxEventBytes: {
    variable: "SERVERFS_AGENT_MAX_EVENT_BYTES",
    kind: "strict int",
    default: "65536",
    parse: within(65_536, 4096, MAX_EVENT_BYTES_LIMIT),
    description: `Largest stored event, as JSON bytes: a longer agent.message is shortened, any other event is dropped (AGENT_EVENT_TOO_LARGE). 4096 to ${MAX_EVENT_BYTES_LIMIT}.`
  },
  maxEventsPerTask: {
    variable: "SERVERFS_AGENT_MAX_EVENTS_PER_TASK",
    kind: "strict int",
    default: "10000",
    parse: within(10_000, 100, 1_000_000),
    description:
      "Most events stored for one task; later ones are dropped (AGENT_EVENT_LIMIT_REACHED) and the task goes on. 100 to 1000000."
  },
  stateMaxBytes: {
    variable: "SERVERFS_AGENT_STATE_MAX_BYTES",
    kind: "strict int",
    default: "1073741824",
    parse: strictInt(1_073_741_824),
    description:
      "Disk budget of the bridge's state (events and results). Each active task may use a share of half of it (this / (2 × SERVERFS_AGENT_MAX_ACTIVE_TASKS); events beyond it: AGENT_EVENT_LIMIT_REACHED); finished tasks are evicted oldest first to keep within it, and a submission that cannot get a share even then is refused (AGENT_STORAGE_LIMIT_REACHED). At least 19005440 bytes per active task with the defaults: a share of SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES + 64 KiB for a result and 1 MiB of events, doubled."
  },
  maxConnections: {
    variable: "SERVERFS_AGENT_MAX_CONNECTIONS",
    kind: "strict int",
    default: "64",
    parse: atMost(64, MAX_CONNECTIONS_LIMIT),
    description: `Most connections open on the bridge socket at once (at most ${MAX_CONNECTIONS_LIMIT}). A new connection over it takes the place of the connection idle the longest; when every one has a request in flight it gets one BRIDGE_CLOSED line and is closed.`
  },
  connectionIdleSeconds: {
    variable: "SERVERFS_AGENT_CONNECTION_IDLE_SECONDS",
    kind: "strict int",
    default: "60",
    parse: atMost(60, 86_400),
    description:
      "A bridge socket connection that sends no complete request (or does not read its answer) for this long is closed. A connection whose request is being handled is never idle."
  },
  retentionSeconds: {
    variable: "SERVERFS_AGENT_TASK_RETENTION_HOURS",
    kind: "strict int",
    default: "168",
    parse: (raw) => Either.map(strictInt(168)(raw), (hours) => hours * 3600),
    description: "How long a finished task (record, events, requests, spooled result) is kept."
  },
  resultSpoolThresholdBytes: {
    variable: "SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES",
    kind: "strict int",
    default: "262144",
    parse: (raw) =>
      Either.flatMap(strictInt(262144)(raw), (n) =>
        n <= MAX_INLINE_RESULT_BYTES
          ? Either.right(n)
          : Either.left(`must be at most ${MAX_INLINE_RESULT_BYTES}, so that a task view fits one RPC frame`)
      ),
    description:
      "Results up to this size (as JSON text; at most 524288, so a task view fits one RPC frame) are returned inline by get_agent_task; larger ones (up to 8 MiB) are spooled and read with read_agent_task_result."
  },
  enableFakeRuntime: {
    variable: "SERVERFS_AGENT_ENABLE_FAKE_RUNTIME",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "Enable the scripted test runtime `fake` in the bridge. It is still shown to clients only on workdirs that allowlist it."
  },
  codexBin: {
    variable: "SERVERFS_CODEX_BIN",
    kind: "string",
    default: "codex",
    parse: executable("codex"),
    description:
      "The administrator's Codex CLI: a command name looked up on PATH or an absolute path. The Codex adapter runs only where a workdir allowlists `codex`."
  },
  codexHome: {
    variable: "SERVERFS_CODEX_HOME",
    kind: "absolute path",
    default: "$CODEX_HOME or ~/.codex",
    parse: absolutePath(defaultCodexHome),
    description:
      "The CODEX_HOME whose managed app-server daemon (app-server-control/) the bridge connects to."
  },
  codexTransport: {
    variable: "SERVERFS_CODEX_TRANSPORT",
    kind: "string",
    default: "daemon",
    parse: codexTransport,
    description:
      "daemon: the official managed app-server daemon's control socket (WebSocket over the Unix socket); stdio: a `codex app-server` child owned by the bridge."
  },
  codexAutostart: {
    variable: "SERVERFS_CODEX_AUTOSTART",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "When the daemon is not running, run `codex app-server daemon start` (the only lifecycle command used). The daemon then inherits the bridge's environment."
  },
  codexRequestTimeoutSeconds: {
    variable: "SERVERFS_CODEX_REQUEST_TIMEOUT_SECONDS",
    kind: "lenient float",
    default: "10",
    parse: lenientFloat(10),
    description: "Timeout of one JSON-RPC request to Codex (not of a turn)."
  },
  claudeBin: {
    variable: "SERVERFS_CLAUDE_BIN",
    kind: "string",
    default: "claude",
    parse: executable("claude"),
    description:
      "The administrator's Claude Code CLI: a command name looked up on PATH or an absolute path. The Claude adapter runs only where a workdir allowlists `claude`."
  },
  claudeUseBundledCli: {
    variable: "SERVERFS_CLAUDE_USE_BUNDLED_CLI",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "Use the Claude Code binary shipped inside the Agent SDK package instead of SERVERFS_CLAUDE_BIN."
  },
  claudeProbeTimeoutSeconds: {
    variable: "SERVERFS_CLAUDE_PROBE_TIMEOUT_SECONDS",
    kind: "lenient float",
    default: "5",
    parse: lenientFloat(5),
    description: "Timeout of `claude --version` when the runtime is probed."
  },
  providerCancelTimeoutSeconds: {
    variable: "SERVERFS_AGENT_PROVIDER_CANCEL_TIMEOUT_SECONDS",
    kind: "lenient float",
    default: "10",
    parse: lenientFloat(10),
    description:
      "How long a cancel waits for the provider to acknowledge; the task is cancelled at once either way."
  }
}

export const bridgeVariableDocs = (): ReadonlyArray<VariableDoc> =>
  Object.values(BRIDGE_VARIABLES).map(
    (e: Entry<unknown>): VariableDoc => ({
      variable: e.variable,
      kind: e.kind,
      default: e.default,
      scope: "bridge",
      description: e.description
    })
  )

/**
 * The bridge settings with every problem (`serverfs config check`), in the order the bridge
 * checks them: each variable, the disk budget, then (given the workdirs) the state directory
 * outside every workdir. A bad value stands at its default; a rule over a bad value is skipped.
 */
export const checkBridgeSettings = (
  lookup: (variable: string) => string | undefined,
  workdirs?: ReadonlyArray<Workdir>
): { readonly settings: BridgeSettings; readonly problems: ReadonlyArray<ConfigurationError> } => {
  const { value: parsed, problems: parseProblems } = parseEntriesAll(BRIDGE_VARIABLES, lookup)
  const problems = parseProblems.map((p) => new ConfigurationError(p))
  const failed = (...entries: ReadonlyArray<Entry<unknown>>) =>
    entries.some((e) => problems.some((p) => p.variable === e.variable))
  const V = BRIDGE_VARIABLES
  // The user-scoped default (spec v0.3 §22), from the same lookup as every other value; a bad
  // value was already refused (it stands at "", unresolved, and nothing checks it further).
  let stateDir = parsed.stateDir
  if (!failed(V.stateDir) && stateDir === "") {
    const resolved = resolveStateDir(lookup)
    if (Either.isRight(resolved)) stateDir = resolved.right.path
    else problems.push(resolved.left)
  }
  const settings: BridgeSettings = { ...parsed, stateDir }
  // Every active task must be able to hold its largest result and some events within its share.
  if (!failed(V.stateMaxBytes, V.maxActiveTasks, V.maxFinalResponseBytes, V.maxEventBytes)) {
    const perTask = minimumBytesPerActiveTask(settings)
    const least = settings.maxActiveTasks * perTask
    if (settings.stateMaxBytes < least) {
      problems.push(
        new ConfigurationError({
          variable: V.stateMaxBytes.variable,
          problem: `must be at least ${least} (${perTask} per active task, SERVERFS_AGENT_MAX_ACTIVE_TASKS=${settings.maxActiveTasks}, SERVERFS_AGENT_MAX_FINAL_RESPONSE_BYTES=${settings.maxFinalResponseBytes})`
        })
      )
    }
  }
  if (workdirs !== undefined && !failed(V.stateDir)) {
    const inside = runtimeDirectoryProblem(
      [{ variable: V.stateDir.variable, hostPath: settings.stateDir }],
      workdirs
    )
    if (inside !== undefined) problems.push(inside)
  }
  return { settings, problems }
}

const readBridgeVariables = Effect.gen(function* () {
  const raw = new Map<string, string | undefined>()
  const names = [...Object.values(BRIDGE_VARIABLES).map((e) => e.variable), ...BASE_DIRECTORY_VARIABLES]
  for (const name of names) {
    const value = yield* Config.option(Config.string(name)).pipe(Effect.orDie)
    raw.set(name, Option.getOrUndefined(value))
  }
  return raw
})

const firstProblem = (checked: ReturnType<typeof checkBridgeSettings>) => {
  const first = checked.problems[0]
  return first === undefined ? Effect.succeed(checked.settings) : Effect.fail(first)
}

/** The bridge settings from the ambient ConfigProvider; the first bad value stops startup. */
export const loadBridgeSettings: Effect.Effect<BridgeSettings, ConfigurationError> = Effect.flatMap(
  readBridgeVariables,
  (raw) => firstProblem(checkBridgeSettings((variable) => raw.get(variable)))
)

/**
 * The bridge settings, with the state directory outside every workdir (WorkdirOverlap.ts); the
 * lock and socket directories are checked with the shared configuration.
 */
export const loadBridgeSettingsFor = (
  workdirs: ReadonlyArray<Workdir>
): Effect.Effect<BridgeSettings, ConfigurationError> =>
  Effect.flatMap(readBridgeVariables, (raw) =>
    firstProblem(checkBridgeSettings((variable) => raw.get(variable), workdirs))
  )
