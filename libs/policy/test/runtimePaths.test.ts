/**
 * The user-scoped defaults of the bridge's paths (spec v0.3 §6, §21, §22; issue 9 item 2): with
 * no path variable set, the socket and the lock directory are under XDG_DATA_HOME and the state
 * under XDG_STATE_HOME; an unset, empty or relative XDG variable is ignored in favour of HOME
 * (XDG Base Directory rules); without an absolute HOME either, an enabled bridge is a
 * configuration error naming what to set. The `/run/...` system layout is a variable setting.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type ConfigurationError,
  checkBridgeSettings,
  inspectSlotDirectory,
  loadBridgeSettings,
  parseServerConfiguration,
  type ResolvedRuntimePath,
  resolveBridgeSocket,
  resolveLockDir,
  resolveStateDir
} from "@serverfs/policy"
import { ConfigProvider, Effect, Either } from "effect"

type Vars = Readonly<Record<string, string>>
const lookupOf = (vars: Vars) => (name: string) => (Object.hasOwn(vars, name) ? vars[name] : undefined)

const SOCKET = "serverfs-agent-bridge/runtime/socket/bridge.sock"
const LOCKS = "serverfs-agent-bridge/runtime/locks"
const STATE = "serverfs-agent-bridge"

type Expected = readonly [path: string, origin: ResolvedRuntimePath["origin"]] | "error"

/**
 * The resolution table, written out case by case (not derived from the code): environment →
 * socket, lock directory, state directory.
 */
const TABLE: ReadonlyArray<
  readonly [name: string, env: Vars, socket: Expected, locks: Expected, state: Expected]
> = [
  [
    "HOME only",
    { HOME: "/home/u" },
    [`/home/u/.local/share/${SOCKET}`, "HOME"],
    [`/home/u/.local/share/${LOCKS}`, "HOME"],
    [`/home/u/.local/state/${STATE}`, "HOME"]
  ],
  [
    "XDG_DATA_HOME and XDG_STATE_HOME absolute win over HOME",
    { HOME: "/home/u", XDG_DATA_HOME: "/data", XDG_STATE_HOME: "/state" },
    [`/data/${SOCKET}`, "XDG_DATA_HOME"],
    [`/data/${LOCKS}`, "XDG_DATA_HOME"],
    [`/state/${STATE}`, "XDG_STATE_HOME"]
  ],
  [
    "XDG variables without HOME",
    { XDG_DATA_HOME: "/data/", XDG_STATE_HOME: "/state//x/../y" },
    [`/data/${SOCKET}`, "XDG_DATA_HOME"],
    [`/data/${LOCKS}`, "XDG_DATA_HOME"],
    [`/state/y/${STATE}`, "XDG_STATE_HOME"]
  ],
  [
    "empty and blank XDG variables are ignored",
    { HOME: "/home/u", XDG_DATA_HOME: "", XDG_STATE_HOME: "  " },
    [`/home/u/.local/share/${SOCKET}`, "HOME"],
    [`/home/u/.local/share/${LOCKS}`, "HOME"],
    [`/home/u/.local/state/${STATE}`, "HOME"]
  ],
  [
    "relative XDG variables are ignored (XDG Base Directory spec)",
    { HOME: "/home/u", XDG_DATA_HOME: "share", XDG_STATE_HOME: "./state" },
    [`/home/u/.local/share/${SOCKET}`, "HOME"],
    [`/home/u/.local/share/${LOCKS}`, "HOME"],
    [`/home/u/.local/state/${STATE}`, "HOME"]
  ],
  ["no HOME and no XDG variable: no default", {}, "error", "error", "error"],
  ["an empty HOME counts as unset", { HOME: "" }, "error", "error", "error"],
  [
    "a relative HOME is not used, and neither is a relative XDG variable",
    { HOME: "home/u", XDG_DATA_HOME: "data" },
    "error",
    "error",
    "error"
  ],
  [
    "a relative HOME with an absolute XDG_DATA_HOME: the data paths resolve, the state does not",
    { HOME: "home/u", XDG_DATA_HOME: "/data" },
    [`/data/${SOCKET}`, "XDG_DATA_HOME"],
    [`/data/${LOCKS}`, "XDG_DATA_HOME"],
    "error"
  ],
  [
    "the variables set win over every default (trimmed)",
    {
      HOME: "/home/u",
      XDG_DATA_HOME: "/data",
      SERVERFS_AGENT_BRIDGE_SOCKET: " /srv/b/bridge.sock ",
      SERVERFS_AGENT_LOCK_DIR: "/srv/locks",
      SERVERFS_AGENT_BRIDGE_STATE_DIR: "/srv/state"
    },
    ["/srv/b/bridge.sock", "variable"],
    ["/srv/locks", "variable"],
    ["/srv/state", "variable"]
  ],
  [
    "the variables set without HOME: no default needed",
    {
      SERVERFS_AGENT_BRIDGE_SOCKET: "/srv/b/bridge.sock",
      SERVERFS_AGENT_LOCK_DIR: "/srv/locks",
      SERVERFS_AGENT_BRIDGE_STATE_DIR: "/srv/state"
    },
    ["/srv/b/bridge.sock", "variable"],
    ["/srv/locks", "variable"],
    ["/srv/state", "variable"]
  ],
  [
    "the /run system layout, set by the variables",
    {
      HOME: "/home/u",
      SERVERFS_AGENT_BRIDGE_SOCKET: "/run/serverfs-agent-bridge/bridge.sock",
      SERVERFS_AGENT_LOCK_DIR: "/run/serverfs-agent-locks"
    },
    ["/run/serverfs-agent-bridge/bridge.sock", "system layout"],
    ["/run/serverfs-agent-locks", "system layout"],
    [`/home/u/.local/state/${STATE}`, "HOME"]
  ]
]

const check = (
  resolved: Either.Either<ResolvedRuntimePath, ConfigurationError>,
  expected: Expected,
  variable: string,
  xdg: string
) => {
  if (expected === "error") {
    expect(Either.isLeft(resolved)).toBe(true)
    if (Either.isLeft(resolved)) {
      expect(resolved.left.variable).toBe(variable)
      expect(resolved.left.problem).toBe(
        `has no default: neither ${xdg} nor HOME is set to an absolute path; set ${variable} (or ${xdg}, or HOME)`
      )
    }
  } else {
    expect(resolved).toEqual(Either.right({ variable, path: expected[0], origin: expected[1] }))
  }
}

describe("the resolution table", () => {
  it.each(TABLE)("%s", (_name, env, socket, locks, state) => {
    const lookup = lookupOf(env)
    check(resolveBridgeSocket(lookup), socket, "SERVERFS_AGENT_BRIDGE_SOCKET", "XDG_DATA_HOME")
    check(resolveLockDir(lookup), locks, "SERVERFS_AGENT_LOCK_DIR", "XDG_DATA_HOME")
    check(resolveStateDir(lookup), state, "SERVERFS_AGENT_BRIDGE_STATE_DIR", "XDG_STATE_HOME")
  })
})

const ENABLED: Vars = { SERVERFS_AGENT_BRIDGE_ENABLED: "true" }
const parse = (vars: Vars) => parseServerConfiguration(lookupOf(vars), inspectSlotDirectory)

describe("the loaders use it (serverfs-mcp, serverfs-bridge and config check alike)", () => {
  it("with no path variable, the shared configuration carries the user-scoped socket and lock directory", () => {
    const config = Either.getOrThrow(parse({ ...ENABLED, HOME: "/home/u" }))
    expect(config.global.agentBridgeSocket).toBe(`/home/u/.local/share/${SOCKET}`)
    expect(config.global.agentLockDir).toBe(`/home/u/.local/share/${LOCKS}`)
  })

  it("bridge enabled, no HOME and no XDG_DATA_HOME → error naming SERVERFS_AGENT_LOCK_DIR, then the socket", () => {
    const noLocks = parse({ ...ENABLED, HOME: "relative-home-xyz" })
    expect(Either.isLeft(noLocks) && noLocks.left.variable).toBe("SERVERFS_AGENT_LOCK_DIR")
    expect(Either.isLeft(noLocks) && noLocks.left.message).not.toContain("relative-home-xyz")
    const noSocket = parse({ ...ENABLED, SERVERFS_AGENT_LOCK_DIR: "/srv/locks" })
    expect(Either.isLeft(noSocket) && noSocket.left.variable).toBe("SERVERFS_AGENT_BRIDGE_SOCKET")
    expect(
      Either.isRight(
        parse({
          ...ENABLED,
          SERVERFS_AGENT_LOCK_DIR: "/srv/locks",
          SERVERFS_AGENT_BRIDGE_SOCKET: "/srv/b.sock"
        })
      )
    ).toBe(true)
  })

  it("bridge disabled: nothing uses the paths, so a missing HOME is no error (the paths stay empty)", () => {
    const config = Either.getOrThrow(parse({}))
    expect(config.global.agentBridgeSocket).toBe("")
    expect(config.global.agentLockDir).toBe("")
  })

  it("the state directory: user-scoped by default; no HOME → error naming SERVERFS_AGENT_BRIDGE_STATE_DIR", () => {
    expect(checkBridgeSettings(lookupOf({ XDG_STATE_HOME: "/state" })).settings.stateDir).toBe(
      `/state/${STATE}`
    )
    const { problems } = checkBridgeSettings(lookupOf({ XDG_STATE_HOME: "state" }))
    expect(problems.map((p) => p.variable)).toEqual(["SERVERFS_AGENT_BRIDGE_STATE_DIR"])
    // A relative value of the variable itself is its own error, never resolved further.
    const relative = checkBridgeSettings(lookupOf({ SERVERFS_AGENT_BRIDGE_STATE_DIR: "state", HOME: "/h" }))
    expect(relative.problems.map((p) => p.problem)).toEqual(["must be an absolute path"])
  })

  it.effect("the bridge's loader reads HOME and XDG_STATE_HOME from its ConfigProvider", () =>
    Effect.gen(function* () {
      const load = (env: Vars) =>
        Effect.either(loadBridgeSettings).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      const home = yield* load({ HOME: "/home/u" })
      expect(Either.map(home, (s) => s.stateDir)).toEqual(Either.right(`/home/u/.local/state/${STATE}`))
      const none = yield* load({})
      expect(Either.isLeft(none) && none.left.variable).toBe("SERVERFS_AGENT_BRIDGE_STATE_DIR")
    })
  )
})
