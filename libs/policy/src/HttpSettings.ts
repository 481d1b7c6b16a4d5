import * as net from "node:net"
import { Config, Effect, Either, Option } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import { type Entry, type GlobalSettings, parseEntriesAll, type VariableDoc } from "./GlobalSettings.js"
import { isUnset, type Parse, strictBool, strictCountIn, strictIntIn } from "./Parsers.js"
import { readTokenFile } from "./TokenFile.js"

/**
 * How serverfs-mcp is reached (issue 9): stdio (the default) or Streamable HTTP, and every bound
 * of the HTTP server. Only serverfs-mcp reads these; they come from the same environment and .env
 * file as the rest of the configuration and are listed by `serverfs config check`.
 */
export type McpTransport = "stdio" | "http"

export interface HttpSettings {
  readonly transport: McpTransport
  readonly host: string
  readonly port: number
  /** Explicit Host header values; empty means the loopback defaults for the port (see allowedHosts). */
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowedOrigins: ReadonlyArray<string>
  readonly tokenFile: string
  readonly authenticatingProxy: boolean
  /** null: derived from the write and binary-transfer limits (maxBodyBytesFor). */
  readonly maxBodyBytes: number | null
  /** null: four request bodies (maxBodyMemoryBytesFor). */
  readonly maxBodyMemoryBytes: number | null
  readonly maxHeaderBytes: number
  readonly headersTimeoutSeconds: number
  readonly requestTimeoutSeconds: number
  readonly keepAliveTimeoutSeconds: number
  readonly maxConnections: number
  readonly maxSessions: number
  readonly sessionIdleSeconds: number
  readonly maxRequestsPerSession: number
  readonly shutdownGraceSeconds: number
}

const mcpTransport: Parse<McpTransport> = (raw) => {
  const word = (raw ?? "").trim().toLowerCase()
  if (word === "" || word === "stdio") return Either.right("stdio")
  if (word === "http") return Either.right("http")
  return Either.left("expected stdio or http")
}

/** An IP literal or `localhost`: the address to bind, never a name that DNS could move. */
const bindHost: Parse<string> = (raw) => {
  if (isUnset(raw)) return Either.right("127.0.0.1")
  const value = raw.trim().toLowerCase()
  return net.isIP(value) !== 0 || value === "localhost"
    ? Either.right(value)
    : Either.left("expected an IP address or localhost")
}

/** A comma list checked entry by entry; a malformed entry stops startup (it is not echoed). */
const commaList =
  (valid: (entry: string) => boolean, expected: string): Parse<ReadonlyArray<string>> =>
  (raw) => {
    if (isUnset(raw)) return Either.right([])
    const entries = [...new Set(raw.split(",").map((e) => e.trim().toLowerCase()))].filter((e) => e !== "")
    if (entries.length > 64) return Either.left("at most 64 entries")
    return entries.every(valid) ? Either.right(entries) : Either.left(expected)
  }

// A Host header value: a name or IPv4 address, or a bracketed IPv6 address, with an optional port.
const HOST_VALUE = /^(?:[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/
// An Origin: scheme, host and optional port, nothing else (no path, no wildcard).
const ORIGIN_VALUE = /^https?:\/\/(?:[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/

const absoluteOrEmpty: Parse<string> = (raw) =>
  isUnset(raw)
    ? Either.right("")
    : raw.trim().startsWith("/")
      ? Either.right(raw.trim())
      : Either.left("must be an absolute path")

const maxBody: Parse<number | null> = (raw) =>
  isUnset(raw) ? Either.right(null) : strictIntIn(0, 65_536, 1_073_741_824)(raw)

const maxBodyMemory: Parse<number | null> = (raw) =>
  isUnset(raw) ? Either.right(null) : strictIntIn(0, 65_536, 17_179_869_184)(raw)

export const HTTP_VARIABLES: { readonly [K in keyof HttpSettings]: Entry<HttpSettings[K]> } = {
  transport: {
    variable: "SERVERFS_MCP_TRANSPORT",
    kind: "string",
    default: "stdio",
    parse: mcpTransport,
    description:
      "How serverfs-mcp is reached: stdio (one client, the parent process) or http (Streamable HTTP at /mcp; docs/remote-access.md)."
  },
  host: {
    variable: "SERVERFS_HTTP_HOST",
    kind: "string",
    default: "127.0.0.1",
    parse: bindHost,
    description:
      "Address the HTTP transport binds: an IP address or localhost. A non-loopback address needs SERVERFS_HTTP_ALLOWED_HOSTS and a token (or SERVERFS_HTTP_AUTHENTICATING_PROXY=true)."
  },
  port: {
    variable: "SERVERFS_HTTP_PORT",
    kind: "strict int",
    default: "8765",
    parse: strictCountIn(8765, 0, 65_535),
    description:
      "TCP port of the HTTP transport, 0 to 65535 (0: an ephemeral port, reported in the http_listening line)."
  },
  allowedHosts: {
    variable: "SERVERFS_HTTP_ALLOWED_HOSTS",
    kind: "string",
    default: "127.0.0.1:<port>,localhost:<port>,[::1]:<port> (loopback bind only)",
    parse: commaList(
      (e) => HOST_VALUE.test(e),
      "every entry must be a Host header value (host or host:port, no scheme or wildcard)"
    ),
    description:
      "Comma list of accepted Host header values (exact, case-insensitive); any other Host gets 421. Required when the bind address is not loopback."
  },
  allowedOrigins: {
    variable: "SERVERFS_HTTP_ALLOWED_ORIGINS",
    kind: "string",
    default: "",
    parse: commaList(
      (e) => ORIGIN_VALUE.test(e),
      "every entry must be an origin (http[s]://host[:port], no path or wildcard)"
    ),
    description:
      "Comma list of accepted Origin header values; a request with a non-empty Origin not listed gets 403. A request without Origin is accepted."
  },
  tokenFile: {
    variable: "SERVERFS_HTTP_TOKEN_FILE",
    kind: "absolute path",
    default: "",
    parse: absoluteOrEmpty,
    description:
      "File holding the bearer token every HTTP request must carry (Authorization: Bearer …; 401 otherwise). Read once at startup; must be a regular file, not group- or world-readable, 16 to 4096 bytes of visible ASCII."
  },
  authenticatingProxy: {
    variable: "SERVERFS_HTTP_AUTHENTICATING_PROXY",
    kind: "strict bool",
    default: "false",
    parse: strictBool(false),
    description:
      "true: an authenticating tunnel or proxy fronts the server, so a non-loopback bind may start without a token."
  },
  maxBodyBytes: {
    variable: "SERVERFS_HTTP_MAX_BODY_BYTES",
    kind: "strict int",
    default: "(the largest legitimate request + 1 MiB: 12582912 with the default limits)",
    parse: maxBody,
    description:
      "Largest request body, counted as it arrives (413 beyond it); 65536 to 1073741824. Must admit the largest upload_binary_file (base64) and create_text_file (JSON-escaped) request."
  },
  maxBodyMemoryBytes: {
    variable: "SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES",
    kind: "strict int",
    default: "(four request bodies: 4 × SERVERFS_HTTP_MAX_BODY_BYTES)",
    parse: maxBodyMemory,
    description:
      "Most request-body bytes held at once over all connections, from the first byte received until the request is answered; a request that would go past it gets 503 and its connection is closed. At least SERVERFS_HTTP_MAX_BODY_BYTES; up to 17179869184."
  },
  maxHeaderBytes: {
    variable: "SERVERFS_HTTP_MAX_HEADER_BYTES",
    kind: "strict int",
    default: "16384",
    parse: strictIntIn(16_384, 1024, 65_536),
    description: "Largest request head (request line and headers); 1024 to 65536 (431 beyond it)."
  },
  headersTimeoutSeconds: {
    variable: "SERVERFS_HTTP_HEADERS_TIMEOUT_SECONDS",
    kind: "strict int",
    default: "10",
    parse: strictIntIn(10, 1, 300),
    description:
      "A client must send its whole request head within this many seconds (no slowloris); 1 to 300."
  },
  requestTimeoutSeconds: {
    variable: "SERVERFS_HTTP_REQUEST_TIMEOUT_SECONDS",
    kind: "strict int",
    default: "60",
    parse: strictIntIn(60, 1, 3600),
    description: "A client must send its whole request (head and body) within this many seconds; 1 to 3600."
  },
  keepAliveTimeoutSeconds: {
    variable: "SERVERFS_HTTP_KEEP_ALIVE_TIMEOUT_SECONDS",
    kind: "strict int",
    default: "65",
    parse: strictIntIn(65, 1, 300),
    description:
      "An idle keep-alive connection is closed after this many seconds; 1 to 300. Longer than the usual 60 s idle timeout of a fronting proxy or tunnel, so the side that reuses a connection closes it first (a server closing as a request arrives loses that request)."
  },
  maxConnections: {
    variable: "SERVERFS_HTTP_MAX_CONNECTIONS",
    kind: "strict int",
    default: "512",
    parse: strictIntIn(512, 8, 65536),
    description:
      "Most TCP connections at once (open or idle); a connection beyond it is closed at once. 8 to 65536."
  },
  maxSessions: {
    variable: "SERVERFS_HTTP_MAX_SESSIONS",
    kind: "strict int",
    default: "32",
    parse: strictIntIn(32, 1, 4096),
    description:
      "Most MCP sessions at once; an initialize beyond it gets 503 with a JSON-RPC error. 1 to 4096."
  },
  sessionIdleSeconds: {
    variable: "SERVERFS_HTTP_SESSION_IDLE_SECONDS",
    kind: "strict int",
    default: "900",
    parse: strictIntIn(900, 1, 86_400),
    description:
      "A session with no request for this many seconds (and none in flight) is closed; its id then gets 404 and the client re-initializes. 1 to 86400."
  },
  maxRequestsPerSession: {
    variable: "SERVERFS_HTTP_MAX_REQUESTS_PER_SESSION",
    kind: "strict int",
    default: "16",
    parse: strictIntIn(16, 1, 1024),
    description: "Most requests one session may have in flight at once (429 beyond it); 1 to 1024."
  },
  shutdownGraceSeconds: {
    variable: "SERVERFS_HTTP_SHUTDOWN_GRACE_SECONDS",
    kind: "strict int",
    default: "30",
    parse: strictIntIn(30, 1, 600),
    description:
      "On SIGTERM/SIGINT the server stops accepting and waits this long for calls in flight before it closes every session; 1 to 600."
  }
}

/** Addresses that only this host can reach. */
export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || host === "::1" || (net.isIPv4(host) && host.startsWith("127."))

/** The Host values accepted: the explicit list, or the loopback names with the listening port. */
export const allowedHostsFor = (settings: HttpSettings, port: number): ReadonlyArray<string> =>
  settings.allowedHosts.length > 0
    ? settings.allowedHosts
    : [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]

const MIB = 1_048_576
/**
 * The body the largest legitimate request needs: an upload carries its bytes in base64 (4/3), a
 * text file its characters JSON-escaped (at most 6 bytes per byte, `\u00XX`), plus envelope.
 */
export const requiredBodyBytes = (
  global: Pick<GlobalSettings, "maxWriteBytes" | "maxBinaryTransferBytes" | "binaryTransferEnabled">
): number =>
  Math.max(
    6 * global.maxWriteBytes,
    global.binaryTransferEnabled ? Math.ceil(global.maxBinaryTransferBytes / 3) * 4 : 0
  ) + MIB

export const maxBodyBytesFor = (
  settings: HttpSettings,
  global: Pick<GlobalSettings, "maxWriteBytes" | "maxBinaryTransferBytes" | "binaryTransferEnabled">
): number => settings.maxBodyBytes ?? Math.max(requiredBodyBytes(global), 12 * MIB)

/**
 * The memory all request bodies may hold at once. Each body is bounded on its own, but up to
 * SERVERFS_HTTP_MAX_CONNECTIONS clients could each send one just under the limit at the same
 * time (512 × 12 MiB); this budget bounds their sum.
 */
export const maxBodyMemoryBytesFor = (
  settings: HttpSettings,
  global: Pick<GlobalSettings, "maxWriteBytes" | "maxBinaryTransferBytes" | "binaryTransferEnabled">
): number => settings.maxBodyMemoryBytes ?? 4 * maxBodyBytesFor(settings, global)

export const httpVariableDocs = (): ReadonlyArray<VariableDoc> =>
  Object.values(HTTP_VARIABLES).map(
    (e: Entry<unknown>): VariableDoc => ({
      variable: e.variable,
      kind: e.kind,
      default: e.default,
      scope: "serverfs-mcp",
      description: e.description
    })
  )

/** The HTTP settings with every problem; `token` is read only when the file is named and valid. */
export interface HttpCheck {
  readonly settings: HttpSettings
  readonly token: string | undefined
  readonly problems: ReadonlyArray<ConfigurationError>
}

export const checkHttpSettings = (
  lookup: (variable: string) => string | undefined,
  global: Pick<GlobalSettings, "maxWriteBytes" | "maxBinaryTransferBytes" | "binaryTransferEnabled">
): HttpCheck => {
  const V = HTTP_VARIABLES
  const { value: settings, problems: parseProblems } = parseEntriesAll(HTTP_VARIABLES, lookup)
  const problems = parseProblems.map((p) => new ConfigurationError(p))
  const fail = (variable: string, problem: string) =>
    problems.push(new ConfigurationError({ variable, problem }))
  let token: string | undefined
  // Only an HTTP server needs the rest; stdio ignores it (a shared .env file may carry it).
  if (settings.transport === "http" && problems.length === 0) {
    if (settings.tokenFile !== "") {
      const read = readTokenFile(settings.tokenFile)
      if (Either.isLeft(read)) fail(V.tokenFile.variable, read.left)
      else token = read.right
    }
    const loopback = isLoopbackHost(settings.host)
    if (!loopback && settings.allowedHosts.length === 0) {
      fail(V.allowedHosts.variable, "must be set when SERVERFS_HTTP_HOST is not a loopback address")
    }
    if (!loopback && settings.tokenFile === "" && !settings.authenticatingProxy) {
      fail(
        V.tokenFile.variable,
        "must be set when SERVERFS_HTTP_HOST is not a loopback address (or set SERVERFS_HTTP_AUTHENTICATING_PROXY=true if an authenticating proxy fronts the server)"
      )
    }
    const required = requiredBodyBytes(global)
    if (settings.maxBodyBytes !== null && settings.maxBodyBytes < required) {
      fail(
        V.maxBodyBytes.variable,
        `must be at least ${required} to admit the largest write or upload request`
      )
    }
    const body = maxBodyBytesFor(settings, global)
    if (settings.maxBodyMemoryBytes !== null && settings.maxBodyMemoryBytes < body) {
      fail(
        V.maxBodyMemoryBytes.variable,
        `must be at least the request body limit (${body}), or no largest request could ever be received`
      )
    }
  }
  return { settings, token, problems }
}

/** The HTTP settings and token from the ambient ConfigProvider; the first problem stops startup. */
export const loadHttpSettings = (
  global: Pick<GlobalSettings, "maxWriteBytes" | "maxBinaryTransferBytes" | "binaryTransferEnabled">
): Effect.Effect<
  { readonly settings: HttpSettings; readonly token: string | undefined },
  ConfigurationError
> =>
  Effect.gen(function* () {
    const raw = new Map<string, string | undefined>()
    for (const entry of Object.values(HTTP_VARIABLES)) {
      const value = yield* Config.option(Config.string(entry.variable)).pipe(Effect.orDie)
      raw.set(entry.variable, Option.getOrUndefined(value))
    }
    const checked = checkHttpSettings((variable) => raw.get(variable), global)
    const first = checked.problems[0]
    if (first !== undefined) return yield* first
    return { settings: checked.settings, token: checked.token }
  })

/** Only the transport (the audit's `transport` field); a bad value is reported by loadHttpSettings. */
export const loadMcpTransport: Effect.Effect<McpTransport> = Effect.map(
  Config.option(Config.string(HTTP_VARIABLES.transport.variable)).pipe(Effect.orDie),
  (value) => Either.getOrElse(mcpTransport(Option.getOrUndefined(value)), () => "stdio" as const)
)
