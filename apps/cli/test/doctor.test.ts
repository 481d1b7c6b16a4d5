import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { agentStackEnv, cliMain, makeTempTree, startBridgeProcess, type TempTree } from "@serverfs/testkit"
import { Effect } from "effect"

/**
 * `serverfs doctor` on the real binaries: a healthy setup with a real bridge (scripted runtime)
 * passes every check; each broken setup FAILs the right check with the right fix line. Cases
 * that cannot be broken as root (root ignores permission bits) skip with that reason.
 */
const asRoot = process.getuid?.() === 0

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

const doctor = (env: Record<string, string>, ...args: ReadonlyArray<string>): Effect.Effect<Run> =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      process.execPath,
      [cliMain, "doctor", ...args],
      { env: { PATH: process.env.PATH ?? "/usr/bin", ...env }, encoding: "utf8", timeout: 60_000 },
      (_error, stdout, stderr) => resume(Effect.succeed({ status: child.exitCode, stdout, stderr }))
    )
  })

/** The status, detail and fix of one check, from the --json document. */
const checkOf = (run: Run, name: string) => {
  const doc = JSON.parse(run.stdout) as {
    readonly checks: ReadonlyArray<{ check: string; status: string; detail: string; fix: string | null }>
  }
  const found = doc.checks.find((c) => c.check === name)
  if (found === undefined) throw new Error(`no check ${name} in ${run.stdout}`)
  return found
}

/** A temp tree for one test; whatever the test starts in it (a bridge) is stopped before removal. */
const withTree = <A, E, R>(use: (tree: TempTree) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => makeTempTree("serverfs-doctor-")),
    (tree) => Effect.scoped(use(tree)),
    (tree) => Effect.sync(() => tree.remove())
  )

const withBridge = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(() => startBridgeProcess(env)),
    (bridge) => Effect.promise(() => bridge.kill("SIGTERM"))
  )

describe("serverfs doctor", () => {
  it.effect("healthy: a running bridge with the scripted runtime, every check PASS (or SKIP), exit 0", () =>
    withTree((tree) =>
      Effect.gen(function* () {
        const env = agentStackEnv(tree)
        yield* withBridge(env)
        const human = yield* doctor(env)
        expect(human.status).toBe(0)
        expect(human.stdout).toMatch(/^PASS {2}configuration +valid: 1 workdir\(s\), 1 read-write$/m)
        for (const check of [
          "workdir main",
          "socket path",
          "bridge reachable",
          "runtime fake",
          "lock directory",
          "state directory",
          "disk space"
        ])
          expect(human.stdout).toMatch(new RegExp(`^PASS {2}${check} `, "m"))
        expect(human.stdout).not.toMatch(/^(WARN|FAIL)/m)
        expect(human.stdout).toContain("doctor: all checks passed")
        expect(human.stdout).not.toContain(tree.base)
        // Not a terminal: no colour.
        expect(human.stdout).not.toContain("\u001b[")

        const json = yield* doctor(env, "--json")
        expect(json.status).toBe(0)
        const doc = JSON.parse(json.stdout)
        expect(Object.keys(doc)).toEqual(["ok", "exitCode", "checks"])
        expect(doc.ok).toBe(true)
        for (const c of doc.checks) expect(Object.keys(c)).toEqual(["check", "status", "detail", "fix"])
      })
    )
  )

  it.effect("the bridge not running: FAIL bridge reachable, fix starts it; runtimes SKIP; exit 2", () =>
    withTree((tree) =>
      Effect.gen(function* () {
        const env = agentStackEnv(tree)
        const bridge = yield* withBridge(env)
        yield* Effect.promise(() => bridge.kill("SIGKILL"))
        const run = yield* doctor(env, "--json")
        expect(run.status).toBe(2)
        const reach = checkOf(run, "bridge reachable")
        expect(reach.status).toBe("FAIL")
        expect(reach.detail).toMatch(/the bridge is not running/)
        expect(reach.fix).toMatch(/^start serverfs-bridge/)
        expect(checkOf(run, "runtimes").status).toBe("SKIP")

        // The same tree, further broken one piece at a time.
        fs.chmodSync(`${tree.base}/run`, 0o777)
        const socketDir = checkOf(yield* doctor(env, "--json"), "socket path")
        expect(socketDir.status).toBe("FAIL")
        expect(socketDir.detail).toContain("group- or world-writable")
        expect(socketDir.fix).toMatch(/^chmod 0700 the directory of SERVERFS_AGENT_BRIDGE_SOCKET/)

        fs.chmodSync(`${tree.base}/locks`, 0o777)
        const openLocks = checkOf(yield* doctor(env, "--json"), "lock directory")
        expect(openLocks.status).toBe("FAIL")
        expect(openLocks.detail).toBe("SERVERFS_AGENT_LOCK_DIR is world-writable")
        expect(openLocks.fix).toMatch(/^chmod 0700 it/)

        fs.renameSync(`${tree.base}/locks`, `${tree.base}/locks.real`)
        fs.symlinkSync(`${tree.base}/locks.real`, `${tree.base}/locks`)
        const linked = checkOf(yield* doctor(env, "--json"), "lock directory")
        expect(linked.status).toBe("FAIL")
        expect(linked.detail).toBe("SERVERFS_AGENT_LOCK_DIR is a symbolic link")
        expect(linked.fix).toMatch(/^replace it by a real directory/)

        fs.rmSync(`${tree.base}/state`, { recursive: true })
        const stateGone = yield* doctor(env, "--json")
        const state = checkOf(stateGone, "state directory")
        expect(state.status).toBe("FAIL")
        expect(state.detail).toBe("SERVERFS_AGENT_BRIDGE_STATE_DIR does not exist")
        expect(state.fix).toMatch(/^start serverfs-bridge once/)
        expect(checkOf(stateGone, "disk space").status).toBe("SKIP")
        expect(stateGone.stdout).not.toContain(tree.base)
      })
    )
  )

  it.effect.skipIf(asRoot)(
    "a state directory this user cannot write: FAIL (skipped as root: root writes through permission bits)",
    () =>
      withTree((tree) =>
        Effect.gen(function* () {
          const env = agentStackEnv(tree)
          fs.mkdirSync(`${tree.base}/state`, { mode: 0o500 })
          const state = checkOf(yield* doctor(env, "--json"), "state directory")
          expect(state.status).toBe("FAIL")
          expect(state.detail).toBe("SERVERFS_AGENT_BRIDGE_STATE_DIR is not writable by this user")
        })
      )
  )

  it.effect("a socket path too long for sun_path: FAIL socket path by the bridge's own rule", () =>
    withTree((tree) =>
      Effect.gen(function* () {
        const env = {
          ...agentStackEnv(tree),
          SERVERFS_AGENT_BRIDGE_SOCKET: `${tree.base}/${"s".repeat(120)}/b.sock`
        }
        const socket = checkOf(yield* doctor(env, "--json"), "socket path")
        expect(socket.status).toBe("FAIL")
        expect(socket.detail).toBe("SERVERFS_AGENT_BRIDGE_SOCKET: the socket path is longer than 107 bytes")
        expect(socket.fix).toMatch(/^set SERVERFS_AGENT_BRIDGE_SOCKET to an absolute, normalized path/)
      })
    )
  )

  it.effect(
    "a workdir removed after it was configured: FAIL configuration with the servers' line, exit 2",
    () =>
      withTree((tree) =>
        Effect.gen(function* () {
          const env = agentStackEnv(tree)
          fs.rmSync(tree.root, { recursive: true })
          const run = yield* doctor(env, "--json")
          expect(run.status).toBe(2)
          const configuration = checkOf(run, "configuration")
          expect(configuration.status).toBe("FAIL")
          expect(configuration.detail).toBe("WORKDIR_01_PATH: does not exist")
          expect(configuration.fix).toBe("run `serverfs config check` for every error and fix them")
        })
      )
  )

  it.effect(
    "a runtime a workdir allowlists but the bridge does not offer: FAIL runtime fake with the fix",
    () =>
      withTree((tree) =>
        Effect.gen(function* () {
          const env = { ...agentStackEnv(tree), SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false" }
          yield* withBridge(env)
          const run = yield* doctor(env, "--json")
          expect(run.status).toBe(2)
          expect(checkOf(run, "bridge reachable").status).toBe("PASS")
          const fake = checkOf(run, "runtime fake")
          expect(fake.status).toBe("FAIL")
          expect(fake.detail).toContain("a workdir allowlists it")
          expect(fake.fix).toMatch(/^set SERVERFS_AGENT_ENABLE_FAKE_RUNTIME=true for the bridge/)
        })
      )
  )

  it.effect(
    "a bridge whose peer check refuses this user: FAIL bridge reachable, the fix explains the peer ids",
    () =>
      withTree((tree) =>
        Effect.gen(function* () {
          // A uid that is neither root nor this user: the bridge accepts the connection and refuses it.
          const other = String((process.getuid?.() ?? 0) + 4242)
          const env = { ...agentStackEnv(tree), SERVERFS_AGENT_PEER_UID: other }
          yield* withBridge(env)
          const run = yield* doctor(env, "--json")
          expect(run.status).toBe(2)
          const reach = checkOf(run, "bridge reachable")
          expect(reach.status).toBe("FAIL")
          expect(reach.detail).toBe("the bridge refused this user (PEER_NOT_AUTHORIZED)")
          expect(reach.fix).toContain("SERVERFS_AGENT_PEER_UID")
          expect(reach.fix).toContain("SERVERFS_AGENT_PEER_GID")
          expect(run.stdout).not.toContain(other)
        })
      )
  )

  it.effect("the Agent Bridge disabled: the bridge checks SKIP with the reason; a warning exits 1", () =>
    withTree((tree) =>
      Effect.gen(function* () {
        const ok = yield* doctor({ WORKDIR_01_ALIAS: "docs", WORKDIR_01_PATH: tree.root })
        expect(ok.status).toBe(0)
        expect(ok.stdout).toMatch(
          /^SKIP {2}bridge reachable +the Agent Bridge is disabled \(SERVERFS_AGENT_BRIDGE_ENABLED is not true\)$/m
        )
        const none = yield* doctor({})
        expect(none.status).toBe(1)
        expect(none.stdout).toMatch(/^WARN {2}configuration +no workdir is configured/m)
        expect(none.stdout).toContain("fix: run `serverfs config check` for every warning")
      })
    )
  )
})
