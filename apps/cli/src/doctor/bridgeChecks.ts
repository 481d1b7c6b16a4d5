import * as net from "node:net"
import { AgentBridgeUnavailable, PeerNotAuthorized, type RuntimeInfo } from "@serverfs/domain"
import type { ServerConfiguration } from "@serverfs/policy"
import { BridgeClient } from "@serverfs/rpc"
import { Duration, Effect } from "effect"
import { type CheckResult, fail, pass, skip, warn } from "./Check.js"

/**
 * Whether the Agent Bridge answers this user, and what its runtimes say. A plain connect comes
 * first, because the RPC client reports every transport failure alike ("unavailable") while the
 * fixes differ: no socket or a refused connect means the bridge is not running; EACCES means the
 * socket's permissions keep this user out. Then one `runtime.list` through the same client
 * serverfs-mcp uses: a bridge whose peer check refuses this uid/gid answers PEER_NOT_AUTHORIZED.
 */
type Probe = "accepted" | "missing" | "refused" | "denied" | "no-answer" | "error"

/** How long the plain connect may take; the RPC itself uses the configured timeout (at most 10 s). */
const PROBE_TIMEOUT = Duration.seconds(3)
const MAX_CALL_SECONDS = 10

const probeResult = (code: string | undefined): Probe =>
  code === "ENOENT" || code === "ENOTDIR"
    ? "missing"
    : code === "ECONNREFUSED"
      ? "refused"
      : code === "EACCES" || code === "EPERM"
        ? "denied"
        : "error"

const probe = (socketPath: string): Effect.Effect<Probe> =>
  Effect.async<Probe>((resume) => {
    const socket = net.createConnection({ path: socketPath })
    const close = () => {
      socket.removeAllListeners()
      // A late error after destroy must not become an uncaught exception.
      socket.on("error", () => {})
      socket.destroy()
    }
    socket.once("connect", () => {
      close()
      resume(Effect.succeed("accepted"))
    })
    socket.once("error", (e: NodeJS.ErrnoException) => {
      close()
      resume(Effect.succeed(probeResult(e.code)))
    })
    return Effect.sync(close)
  }).pipe(
    Effect.timeoutTo({ duration: PROBE_TIMEOUT, onTimeout: (): Probe => "no-answer", onSuccess: (p) => p })
  )

const START = "start serverfs-bridge (e.g. systemctl start serverfs-bridge) with the same configuration"
const PEER_FIX =
  "the bridge accepts only SERVERFS_AGENT_PEER_UID (default: its own user) and SERVERFS_AGENT_PEER_GID: run doctor as the user serverfs-mcp runs as, or set those variables in the bridge's environment"

const notReachable = (p: Probe): CheckResult => {
  const name = "bridge reachable"
  switch (p) {
    case "missing":
      return fail(name, "no socket at SERVERFS_AGENT_BRIDGE_SOCKET: the bridge is not running", START)
    case "refused":
      return fail(name, "the socket refuses connections: the bridge is not running (a stale socket)", START)
    case "denied":
      return fail(
        name,
        "permission denied on the socket or its directory for this user",
        `${PEER_FIX}; in shared mode (SERVERFS_AGENT_PEER_GID) this user must be in that group`
      )
    case "no-answer":
      return fail(
        name,
        "the socket did not accept a connection in time",
        "check that the bridge is not hung (its log)"
      )
    default:
      return fail(name, "the socket cannot be connected to", START)
  }
}

/** Why a connected bridge gave no runtime list. */
const refusal = (error: unknown): CheckResult => {
  if (error instanceof PeerNotAuthorized)
    return fail("bridge reachable", "the bridge refused this user (PEER_NOT_AUTHORIZED)", PEER_FIX)
  if (error instanceof AgentBridgeUnavailable)
    return fail(
      "bridge reachable",
      "the bridge accepted the connection but did not answer in time",
      "check the bridge's log; it may be overloaded or stopping"
    )
  return warn(
    "bridge reachable",
    "the bridge answered with a protocol error",
    "run the same version of serverfs and serverfs-bridge"
  )
}

/** The runtimes some workdir allowlists: those must be available; the others are informational. */
const usedRuntimes = (configuration: ServerConfiguration): ReadonlySet<string> =>
  new Set(configuration.workdirs.flatMap((w) => w.agentRuntimes))

const runtimeCheck = (runtime: RuntimeInfo, used: ReadonlySet<string>): CheckResult => {
  const name = `runtime ${runtime.name}`
  const version = runtime.version === undefined || runtime.version === null ? "" : ` ${runtime.version}`
  if (runtime.available) return pass(name, `available${version}`)
  if (!used.has(runtime.name)) return skip(name, "not available, and no workdir allowlists it")
  return fail(
    name,
    `not available, but a workdir allowlists it${runtime.detail === undefined ? "" : ` (${runtime.detail})`}`,
    runtime.name === "fake"
      ? "set SERVERFS_AGENT_ENABLE_FAKE_RUNTIME=true for the bridge, or remove fake from the workdir's runtimes"
      : `install ${runtime.name} for the bridge's user (SERVERFS_${runtime.name.toUpperCase()}_BIN), or remove it from the workdir's runtimes`
  )
}

export const bridgeChecks = (configuration: ServerConfiguration): Effect.Effect<ReadonlyArray<CheckResult>> =>
  Effect.gen(function* () {
    const reached = yield* probe(configuration.global.agentBridgeSocket)
    if (reached !== "accepted")
      return [notReachable(reached), skip("runtimes", "the bridge is not reachable")]
    const client = yield* BridgeClient
    const answer = yield* Effect.either(client.call("runtime.list", {}))
    if (answer._tag === "Left") {
      return [refusal(answer.left), skip("runtimes", "the bridge did not answer runtime.list")]
    }
    const used = usedRuntimes(configuration)
    const listed = answer.right.runtimes
    // A runtime a workdir allowlists but the bridge does not offer at all (not enabled there).
    const missing = [...used].filter((name) => !listed.some((r) => r.name === name))
    return [
      pass("bridge reachable", "answered runtime.list; its peer check accepts this user"),
      ...listed.map((r) => runtimeCheck(r, used)),
      ...missing.map((name) =>
        runtimeCheck({ name, available: false, detail: "not offered by the bridge" }, used)
      )
    ]
  }).pipe(
    Effect.provide(
      BridgeClient.layer({
        socketPath: configuration.global.agentBridgeSocket,
        timeoutSeconds: Math.min(configuration.global.agentBridgeTimeoutSeconds, MAX_CALL_SECONDS)
      })
    )
  )
