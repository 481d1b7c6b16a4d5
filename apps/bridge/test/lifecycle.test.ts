/**
 * The daemon as a process (spec v0.3 §6/§21/§22, bridge-internals §1.2/§9, main.ts): what it
 * prepares before serving, when it refuses to start, and how it stops on SIGTERM — live turns
 * interrupted honestly (BRIDGE_SHUTDOWN) and never re-run, its socket removed, exit 0. Its
 * stdout stays empty and its stderr is JSON lines free of prompts, results and host paths.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  assertBuilt,
  call,
  configurationFailure,
  eventTypes,
  getTask,
  killAll,
  makeSandbox,
  modeOf,
  runToExit,
  type Sandbox,
  startBridge,
  startupFailedFields,
  stderrRecords,
  submitParams,
  waitForStatus
} from "./support/daemon.js"
import { guardPath, lockPath, mutationGate } from "./support/mcpSide.js"

let sandbox: Sandbox

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  await killAll()
  sandbox?.remove()
})
afterAll(killAll)

const fresh = () => {
  sandbox = makeSandbox([
    { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
    { slot: 2, alias: "w2", mode: "review", runtimes: "fake" }
  ])
  return sandbox
}

/** Every stderr line is a JSON object and none carries `secrets`. */
const expectCleanStderr = (stderr: string, secrets: ReadonlyArray<string>) => {
  const records = stderrRecords(stderr)
  expect(records.length).toBeGreaterThan(0)
  for (const record of records) expect(typeof record.event).toBe("string")
  for (const secret of secrets) expect(stderr).not.toContain(secret)
}

describe("startup", { timeout: 120_000 }, () => {
  it("pre-creates the 16 lock files (0600) and active/ (0700), a 0600 socket and a 0700 state dir", async () => {
    const box = fresh()
    const bridge = await startBridge(box.env())
    expect(modeOf(box.lockDir)).toBe(0o700)
    for (let slot = 1; slot <= 16; slot++) {
      const file = lockPath(box.lockDir, slot)
      expect(fs.lstatSync(file).isFile()).toBe(true)
      expect(modeOf(file)).toBe(0o600)
      expect(fs.statSync(file).size).toBe(0)
    }
    expect(fs.existsSync(lockPath(box.lockDir, 17))).toBe(false)
    expect(fs.lstatSync(path.join(box.lockDir, "active")).isDirectory()).toBe(true)
    expect(modeOf(path.join(box.lockDir, "active"))).toBe(0o700)
    expect(fs.readdirSync(path.join(box.lockDir, "active"))).toEqual([])
    expect(fs.lstatSync(box.socketPath).isSocket()).toBe(true)
    expect(modeOf(box.socketPath)).toBe(0o600)
    expect(modeOf(box.stateDir)).toBe(0o700)
    expect(modeOf(path.join(box.stateDir, "state.sqlite3"))).toBe(0o600)
    // Nothing is inside the workdirs: lock files never live there.
    expect(fs.readdirSync(box.workdir("w1"))).toEqual([])

    const { runtimes } = await call(bridge.client, "runtime.list", {})
    expect(runtimes.map((r) => r.name)).toEqual(["fake"])
    expect(runtimes[0]).toMatchObject({ name: "fake", available: true, in_flight_recovery: "none" })

    const exit = await bridge.stop()
    expect(exit).toEqual({ code: 0, signal: null })
    expect(fs.existsSync(box.socketPath)).toBe(false)
    expect(bridge.stdout()).toBe("")
  })

  const disabledCases: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> = [
    ["with a workdir that delegates", {}],
    [
      "with no workdir that delegates",
      { WORKDIR_01_AGENT_MODE: "disabled", WORKDIR_02_AGENT_MODE: "disabled" }
    ]
  ]
  it.each(disabledCases)(
    "refuses SERVERFS_AGENT_BRIDGE_ENABLED=false %s: exit 2, one configuration line and its startup_failed audit line",
    async (_, extra) => {
      const box = fresh()
      const env = box.env({ SERVERFS_AGENT_BRIDGE_ENABLED: "false", ...extra })
      // A disabled slot must not carry runtimes.
      if (extra.WORKDIR_01_AGENT_MODE === "disabled") {
        delete env.WORKDIR_01_AGENT_RUNTIMES
        delete env.WORKDIR_02_AGENT_RUNTIMES
      }
      const result = await runToExit(env)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      const { human, audit } = configurationFailure(result.stderr)
      expect(human).toMatch(/^ServerFS: configuration error: SERVERFS_AGENT_BRIDGE_ENABLED: /)
      const { timestamp, ...fields } = audit
      expect(fields).toEqual(startupFailedFields("SERVERFS_AGENT_BRIDGE_ENABLED"))
      expect(timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(result.stderr).not.toContain(box.base)
      // Refused before anything is created.
      expect(fs.existsSync(box.socketPath)).toBe(false)
      expect(fs.existsSync(box.lockDir)).toBe(false)
      expect(fs.existsSync(box.stateDir)).toBe(false)
    }
  )

  it("refuses overlapping workdirs (a delegating workdir inside another): exit 2, one line, nothing created", async () => {
    sandbox = makeSandbox([
      { slot: 1, alias: "proj", mode: "workspace-write", runtimes: "fake" },
      { slot: 2, alias: "sub", dir: "proj/sub", mode: "review", runtimes: "fake", readOnly: true }
    ])
    const box = sandbox
    const result = await runToExit(box.env())
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    const { human, audit } = configurationFailure(result.stderr)
    expect(audit).toMatchObject(startupFailedFields("WORKDIR_02_PATH"))
    expect(human).toBe(
      'ServerFS: configuration error: WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "proj"); overlapping workdirs must all be read-only with Agent delegation disabled\n'
    )
    expect(fs.existsSync(box.socketPath)).toBe(false)
    expect(fs.existsSync(box.lockDir)).toBe(false)
    expect(fs.existsSync(box.stateDir)).toBe(false)
  })

  it("refuses a state directory inside a workdir: exit 2, the variable named, no path, nothing created", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "proj", mode: "workspace-write", runtimes: "fake" }])
    const box = sandbox
    const stateDir = path.join(box.workdir("proj"), ".bridge-state")
    const result = await runToExit(box.env({ SERVERFS_AGENT_BRIDGE_STATE_DIR: stateDir }))
    expect(result.code).toBe(2)
    const { human, audit } = configurationFailure(result.stderr)
    expect(human).toBe(
      `ServerFS: configuration error: SERVERFS_AGENT_BRIDGE_STATE_DIR: is inside WORKDIR_01_PATH (workdir "proj"); the Agent Bridge's lock, state and socket directories must be outside every workdir\n`
    )
    expect(audit).toMatchObject(startupFailedFields("SERVERFS_AGENT_BRIDGE_STATE_DIR"))
    expect(result.stderr).not.toContain(box.base)
    expect(fs.existsSync(stateDir)).toBe(false)
    expect(fs.existsSync(box.socketPath)).toBe(false)
  })

  it("refuses a socket path a live bridge serves (exit 1, SOCKET_PATH_IN_USE) and leaves that bridge's work alone", async () => {
    const box = fresh()
    const first = await startBridge(box.env())
    const submitted = await call(
      first.client,
      "task.submit",
      submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
    )
    await waitForStatus(first.client, submitted.task_id, "running")
    const guardBefore = fs.readFileSync(guardPath(box.lockDir, 1), "utf8")

    // Its own state and lock directories: on the same ones the instance lock refuses it first
    // (instance.test.ts); here the socket is the only thing the two bridges share.
    const second = await runToExit(
      box.env({
        SERVERFS_AGENT_BRIDGE_STATE_DIR: path.join(box.base, "state2"),
        SERVERFS_AGENT_LOCK_DIR: path.join(box.base, "locks2")
      })
    )
    expect(second.code).toBe(1)
    expect(second.stdout).toBe("")
    expect(second.stderr).toContain("SOCKET_PATH_IN_USE")
    expect(second.stderr).not.toContain(box.workdir("w1"))

    // The live bridge still serves, its task still runs, its lease and guard are untouched.
    const view = await getTask(first.client, submitted.task_id)
    expect(view.status).toBe("running")
    expect(view.error_code).toBeNull()
    expect(eventTypes(await allEvents(first.client, submitted.task_id))).not.toContain("task.reconciled")
    expect(fs.readFileSync(guardPath(box.lockDir, 1), "utf8")).toBe(guardBefore)
    expect(mutationGate(box.lockDir, 1)).toBe("WORKDIR_BUSY")
    expect(fs.lstatSync(box.socketPath).isSocket()).toBe(true)

    await call(first.client, "task.cancel", { task_id: submitted.task_id })
    expect(await first.stop()).toEqual({ code: 0, signal: null })
  })
})

describe("SIGTERM", { timeout: 120_000 }, () => {
  it("interrupts live tasks with BRIDGE_SHUTDOWN, never re-runs them, removes the socket, exits 0", async () => {
    const box = fresh()
    const hostPath = box.workdir("w1")
    const promptMarker = "PROMPT-MARKER-7f3a"
    const resultMarker = "RESULT-MARKER-91c2"
    const bridge = await startBridge(box.env())
    const c = bridge.client

    const done = await call(c, "task.submit", submitParams({ prompt: `complete:${resultMarker}` }, "w2"))
    await waitForStatus(c, done.task_id, "succeeded")
    const running = await call(
      c,
      "task.submit",
      submitParams(
        {
          prompt: `say:${promptMarker} in ${hostPath}/src\nwrite:before.txt=1\nwait:`,
          profile: "workspace-write"
        },
        "w1"
      )
    )
    const waiting = await call(
      c,
      "task.submit",
      submitParams({ prompt: `approval:rm -rf ${hostPath}/${promptMarker}\nwrite:after.txt=1` }, "w2")
    )
    await waitForStatus(c, running.task_id, "running")
    await waitForStatus(c, waiting.task_id, "waiting_for_approval")
    expect(fs.existsSync(path.join(hostPath, "before.txt"))).toBe(true)
    expect(fs.existsSync(guardPath(box.lockDir, 1))).toBe(true)
    const turnsBefore = {
      running: eventTypes(await allEvents(c, running.task_id)).filter((t) => t === "turn.started").length,
      waiting: eventTypes(await allEvents(c, waiting.task_id)).filter((t) => t === "turn.started").length
    }
    expect(turnsBefore).toEqual({ running: 1, waiting: 1 })

    const exit = await bridge.stop("SIGTERM")
    expect(exit).toEqual({ code: 0, signal: null })
    expect(fs.existsSync(box.socketPath)).toBe(false)
    expect(bridge.stdout()).toBe("")
    // The scripted runtime is proven stopped: the lease is free and the guard is gone.
    expect(mutationGate(box.lockDir, 1)).toBe("free")
    expectCleanStderr(bridge.stderr(), [promptMarker, resultMarker, hostPath])
    const stopping = stderrRecords(bridge.stderr()).filter((r) => r.event === "bridge_stopping")
    expect(stopping).toHaveLength(1)

    const again = await startBridge(box.env())
    for (const id of [running.task_id, waiting.task_id]) {
      const view = await getTask(again.client, id)
      expect(view.status).toBe("interrupted")
      expect(view.error_code).toBe("BRIDGE_SHUTDOWN")
      expect(view.pending_request_id).toBeNull()
      const events = await allEvents(again.client, id)
      const types = eventTypes(events)
      expect(types.filter((t) => t === "turn.started")).toHaveLength(1)
      expect(types.filter((t) => t === "task.started")).toHaveLength(1)
      // Terminal before the restart: nothing to reconcile, nothing re-run.
      expect(types).not.toContain("task.reconciled")
      expect(events.filter((e) => e.event_type === "task.interrupted").map((e) => e.payload)).toEqual([
        { error_code: "BRIDGE_SHUTDOWN" }
      ])
    }
    expect((await getTask(again.client, done.task_id)).status).toBe("succeeded")
    expect(fs.existsSync(path.join(box.workdir("w2"), "after.txt"))).toBe(false)
    expect(await again.stop()).toEqual({ code: 0, signal: null })
    expect(again.stdout()).toBe("")
    expectCleanStderr(again.stderr(), [promptMarker, resultMarker, hostPath])
  })
})
