import { Either } from "effect"
import {
  type AgentModeSetting,
  agentMode,
  agentRuntimes,
  KNOWN_RUNTIMES,
  type RuntimeName
} from "./AgentSettings.js"
import { bridgeVariableDocs } from "./BridgeSettings.js"
import type { Entry, GlobalSettings, VariableDoc } from "./GlobalSettings.js"
import { httpVariableDocs } from "./HttpSettings.js"
import {
  globList,
  hostList,
  LOG_LEVELS,
  lenientBool,
  lenientFloat,
  lenientInt,
  logLevel,
  type Parse,
  strictBool,
  strictCountIn,
  strictFloatIn,
  strictInt,
  strictIntIn,
  text
} from "./Parsers.js"

/**
 * The configuration surface as data: every variable with its parser, default and meaning. The
 * loader parses from this table and docs/configuration.md is generated from it, so the two
 * cannot drift (scripts/docs-config.mjs --check runs in the test command).
 */
const DEFAULT_BRIDGE_SOCKET = "/run/serverfs-agent-bridge/bridge.sock"
const DEFAULT_LOCK_DIR = "/run/serverfs-agent-locks"

const globalAgentMode: Parse<AgentModeSetting> = (raw) =>
  Either.map(agentMode(raw), (mode) => mode ?? "disabled")

export const GLOBAL_VARIABLES: { readonly [K in keyof GlobalSettings]: Entry<GlobalSettings[K]> } = {
  logLevel: {
    variable: "SERVERFS_LOG_LEVEL",
    kind: "log level",
    default: "INFO",
    parse: logLevel,
    description: `Lowest level written to the stderr log: ${LOG_LEVELS.join(", ")} (case-insensitive; anything else means INFO).`
  },
  maxReadBytes: {
    variable: "SERVERFS_MAX_READ_BYTES",
    kind: "strict int",
    default: "524288",
    parse: strictInt(524288),
    description:
      "Most bytes one read_text_file page (and one resource read) returns; also the longest line it accepts.",
    override: "MAX_READ_BYTES"
  },
  maxReadLines: {
    variable: "SERVERFS_MAX_READ_LINES",
    kind: "strict int",
    default: "500",
    parse: strictInt(500),
    description: "Most lines one read_text_file page (and one resource read) returns.",
    override: "MAX_READ_LINES"
  },
  defaultListLimit: {
    variable: "SERVERFS_DEFAULT_LIST_LIMIT",
    kind: "lenient int",
    default: "100",
    parse: lenientInt(100),
    description: "Default `limit` of list_directory (capped by SERVERFS_MAX_LIST_ENTRIES)."
  },
  maxListEntries: {
    variable: "SERVERFS_MAX_LIST_ENTRIES",
    kind: "lenient int",
    default: "500",
    parse: lenientInt(500),
    description: "Largest `limit` list_directory honours."
  },
  defaultSearchResults: {
    variable: "SERVERFS_DEFAULT_SEARCH_RESULTS",
    kind: "lenient int",
    default: "50",
    parse: lenientInt(50),
    description: "Default `limit` of find_files and search_text (capped by SERVERFS_MAX_SEARCH_RESULTS)."
  },
  maxSearchResults: {
    variable: "SERVERFS_MAX_SEARCH_RESULTS",
    kind: "lenient int",
    default: "100",
    parse: lenientInt(100),
    description: "Largest `limit` find_files and search_text honour."
  },
  maxWalkEntries: {
    variable: "SERVERFS_MAX_WALK_ENTRIES",
    kind: "lenient int",
    default: "200000",
    parse: lenientInt(200000),
    description: "Most directory entries one find_files walk visits before it stops with truncated=true."
  },
  searchTimeoutSeconds: {
    variable: "SERVERFS_SEARCH_TIMEOUT_SECONDS",
    kind: "lenient float",
    default: "15",
    parse: lenientFloat(15),
    description: "Deadline of one search_text call; ripgrep is terminated, then killed 2 s later."
  },
  searchMaxFileBytes: {
    variable: "SERVERFS_SEARCH_MAX_FILE_BYTES",
    kind: "lenient int",
    default: "52428800",
    parse: lenientInt(52428800),
    description: "Files larger than this are skipped by search_text."
  },
  maxPatternLength: {
    variable: "SERVERFS_MAX_PATTERN_LENGTH",
    kind: "strict int",
    default: "1024",
    parse: strictInt(1024),
    description:
      "Longest find_files `pattern`, search_text `glob` and extra deny glob, in characters (UTF-16 code units). Longer arguments are refused with INVALID_ARGUMENT, longer deny globs stop startup."
  },
  searchMaxLineBytes: {
    variable: "SERVERFS_SEARCH_MAX_LINE_BYTES",
    kind: "strict int",
    default: "4096",
    parse: strictIntIn(4096, 64, 65536),
    description:
      "Longest `text` of one search_text match (64 to 65536): a longer matched line is returned as a preview cut on a UTF-8 character boundary and marked `text_truncated: true`."
  },
  maxReadScanBytes: {
    variable: "SERVERFS_MAX_READ_SCAN_BYTES",
    kind: "strict int",
    default: "268435456",
    parse: strictIntIn(268435456, 1048576, 68719476736),
    description:
      "Most bytes one read_text_file page or resource read scans (skipped lines included) to reach and return its lines (1 MiB to 64 GiB); past it the read fails with READ_LIMIT_EXCEEDED."
  },
  readTimeoutSeconds: {
    variable: "SERVERFS_READ_TIMEOUT_SECONDS",
    kind: "strict float",
    default: "10",
    parse: strictFloatIn(10, 0.1, 3600),
    description:
      "Deadline of one read_text_file page or resource read (0.1 to 3600); past it the read stops, its descriptor is closed and it fails with READ_LIMIT_EXCEEDED."
  },
  maxResponseBytes: {
    variable: "SERVERFS_MAX_RESPONSE_BYTES",
    kind: "strict int",
    default: "4194304",
    parse: strictIntIn(4194304, 65536, 6291456),
    description:
      "Response budget of one tool call or resource read (64 KiB to 6 MiB; the message on the wire is at most 1.5 times this, under the MCP SDK client's 10 MiB message limit): the encoded result (content text plus structuredContent) larger than this is refused with RESPONSE_TOO_LARGE."
  },
  allowHidden: {
    variable: "SERVERFS_ALLOW_HIDDEN",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description: 'Allow path components starting with "." (the reserved .serverfs-* names stay refused).',
    override: "ALLOW_HIDDEN"
  },
  extraDenyGlobs: {
    variable: "SERVERFS_EXTRA_DENY_GLOBS",
    kind: "glob list",
    default: "",
    parse: globList,
    description:
      "Comma-separated deny globs added to the built-in rules and always active. `name/**` denies a directory and everything below it; a glob without `/` is matched against every name of a path; a glob with `/` against the path from the workdir root. A workdir's own list is added to this one, never replaces it.",
    override: "EXTRA_DENY_GLOBS"
  },
  disableDefaultDeny: {
    variable: "SERVERFS_DISABLE_DEFAULT_DENY",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "Release the built-in credential rules (.ssh, .aws, .gnupg, .kube, .env*, *.env, *.pem, *.key, id_*) for reads and mutations.",
    override: "DISABLE_DEFAULT_DENY"
  },
  maxWriteBytes: {
    variable: "SERVERFS_MAX_WRITE_BYTES",
    kind: "strict int",
    default: "1048576",
    parse: strictInt(1048576),
    description:
      "Largest created file, edited file (before and after) and summed old_text+new_text of one edit call.",
    override: "MAX_WRITE_BYTES"
  },
  binaryTransferEnabled: {
    variable: "SERVERFS_BINARY_TRANSFER_ENABLED",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "Enable download_binary_file and upload_binary_file (registered when at least one workdir enables it; a workdir without it refuses both with BINARY_TRANSFER_DISABLED).",
    override: "BINARY_TRANSFER_ENABLED"
  },
  maxBinaryTransferBytes: {
    variable: "SERVERFS_MAX_BINARY_TRANSFER_BYTES",
    kind: "strict int",
    default: "8388608",
    parse: strictInt(8388608),
    description:
      "Largest downloaded file and uploaded payload (decoded bytes). A download is also bounded by SERVERFS_MAX_RESPONSE_BYTES: its base64 is about 4/3 of the file (docs/deviations.md).",
    override: "MAX_BINARY_TRANSFER_BYTES"
  },
  maxEditsPerCall: {
    variable: "SERVERFS_MAX_EDITS_PER_CALL",
    kind: "lenient int",
    default: "50",
    parse: lenientInt(50),
    description: "Most edits one edit_text_file call may carry."
  },
  agentMode: {
    variable: "SERVERFS_AGENT_MODE",
    kind: "agent mode",
    default: "disabled",
    parse: globalAgentMode,
    description: "Default Agent delegation mode of every workdir: disabled, review or workspace-write.",
    override: "AGENT_MODE"
  },
  agentRuntimes: {
    variable: "SERVERFS_AGENT_RUNTIMES",
    kind: "runtime list",
    default: "",
    parse: agentRuntimes as Parse<ReadonlyArray<RuntimeName>>,
    description: `Default Agent runtimes of every workdir, a comma list of ${KNOWN_RUNTIMES.join(", ")} (fake is the scripted test runtime).`,
    override: "AGENT_RUNTIMES"
  },
  agentBridgeEnabled: {
    variable: "SERVERFS_AGENT_BRIDGE_ENABLED",
    kind: "lenient bool",
    default: "false",
    parse: lenientBool(false),
    description:
      "Enable the Agent tools and the shared workdir lease. Lenient: only 1/true/yes/on enable it, anything else disables it."
  },
  agentBridgeSocket: {
    variable: "SERVERFS_AGENT_BRIDGE_SOCKET",
    kind: "absolute path",
    default: DEFAULT_BRIDGE_SOCKET,
    parse: text(DEFAULT_BRIDGE_SOCKET),
    description: "Unix socket of the Agent Bridge."
  },
  agentBridgeTimeoutSeconds: {
    variable: "SERVERFS_AGENT_BRIDGE_TIMEOUT_SECONDS",
    kind: "lenient float",
    default: "30",
    parse: lenientFloat(30),
    description: "Timeout of one RPC to the Agent Bridge (not the task lifetime)."
  },
  agentLockDir: {
    variable: "SERVERFS_AGENT_LOCK_DIR",
    kind: "absolute path",
    default: DEFAULT_LOCK_DIR,
    parse: text(DEFAULT_LOCK_DIR),
    description:
      "Directory of the per-slot lease lock files the bridge pre-creates; must be absolute when the bridge is enabled."
  },
  fileIngressEnabled: {
    variable: "SERVERFS_FILE_INGRESS_ENABLED",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "Accept upload_binary_file's `file` source (ChatGPT `openai/fileParams`): the download URL is fetched by a separate fetcher process. Needs SERVERFS_FILE_INGRESS_ALLOWED_HOSTS or SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS."
  },
  fileIngressTimeoutSeconds: {
    variable: "SERVERFS_FILE_INGRESS_TIMEOUT_SECONDS",
    kind: "strict float",
    default: "30",
    parse: strictFloatIn(30, 0.1, 3600),
    description:
      "Overall deadline of one file fetch as the MCP process sees it (0.1 to 3600): past it the fetcher process is killed and the upload fails with FILE_INGRESS_FAILED."
  },
  fileIngressAllowedHosts: {
    variable: "SERVERFS_FILE_INGRESS_ALLOWED_HOSTS",
    kind: "host list",
    default: "",
    parse: hostList,
    description:
      "Comma list of exact download hosts (no wildcards, no IP addresses, at most 64). Any other host, on the first request or a redirect, fails with HOST_NOT_ALLOWED."
  },
  fileIngressAllowOpenaiBlobHosts: {
    variable: "SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "Also allow OpenAI's file-download host family: `oaiusercontent.com` and every host below it (for example `files.oaiusercontent.com`)."
  },
  fileIngressFetchTimeoutSeconds: {
    variable: "SERVERFS_FILE_INGRESS_FETCH_TIMEOUT_SECONDS",
    kind: "strict float",
    default: "30",
    parse: strictFloatIn(30, 0.1, 3600),
    description:
      "Deadline of the whole download inside the fetcher process, redirects and body included (0.1 to 3600); a slow body fails with FILE_INGRESS_FAILED."
  },
  fileIngressMaxRedirects: {
    variable: "SERVERFS_FILE_INGRESS_MAX_REDIRECTS",
    kind: "strict int",
    default: "3",
    parse: strictCountIn(3, 0, 10),
    description:
      "Most redirects one download follows (0 to 10); one more fails with TOO_MANY_REDIRECTS. Every redirect is checked like the first URL."
  }
}

/** Per-workdir variables that are not overrides of a global setting. */
export const WORKDIR_VARIABLES: ReadonlyArray<VariableDoc> = [
  {
    variable: "WORKDIR_XX_ALIAS",
    kind: "string",
    default: "",
    scope: "per-workdir",
    description:
      "Name clients use for the workdir: `^[A-Za-z][A-Za-z0-9_-]{0,31}$`, case-sensitive, unique. Empty disables the slot."
  },
  {
    variable: "WORKDIR_XX_PATH",
    kind: "absolute path",
    default: "",
    scope: "per-workdir",
    description:
      "Host directory of the workdir: absolute, an existing directory, not a symbolic link. Never shown to clients."
  },
  {
    variable: "WORKDIR_XX_DESCRIPTION",
    kind: "string",
    default: "",
    scope: "per-workdir",
    description: "Free text shown by list_workdirs (trimmed; empty means none)."
  },
  {
    variable: "WORKDIR_XX_READ_ONLY",
    kind: "strict bool",
    default: "true",
    scope: "per-workdir",
    description:
      "Empty or absent means read-only. Only an explicit false enables the five mutation tools. Checked even for a disabled slot."
  }
]

/** Variables of the reference surface this version refuses to honour rather than ignore. */
export const UNSUPPORTED_SWITCHES: ReadonlyArray<{ readonly variable: string; readonly feature: string }> = []

export const allVariableDocs = (): ReadonlyArray<VariableDoc> => [
  ...WORKDIR_VARIABLES,
  ...Object.values(GLOBAL_VARIABLES).map(
    (e: Entry<unknown>): VariableDoc => ({
      variable: e.variable,
      kind: e.kind,
      default: e.default,
      scope: e.override === undefined ? "global" : "global, per-workdir override",
      description:
        e.override === undefined ? e.description : `${e.description} Override: WORKDIR_XX_${e.override}.`
    })
  ),
  ...UNSUPPORTED_SWITCHES.map(
    (s): VariableDoc => ({
      variable: s.variable,
      kind: "strict bool",
      default: "false",
      scope: s.variable.startsWith("WORKDIR_") ? "per-workdir" : "global",
      description: `Reserved: ${s.feature} is not available in this version; true stops startup instead of being silently ignored.`
    })
  ),
  ...bridgeVariableDocs(),
  ...httpVariableDocs()
]

/** Names the .env file merged under the environment (see environmentWithEnvFile). */
export const ENV_FILE_VARIABLE = "SERVERFS_ENV_FILE"
