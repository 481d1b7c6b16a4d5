/**
 * One bridge per state directory and per lock directory (issue 14, item 9). A second
 * `serverfs-bridge` started on another socket but the same state (or lock) directory used to
 * reconcile the first one's live writer as left by a dead process: interrupted, its recovery
 * guard deleted — so after a SIGKILL of the first bridge a mutation went through at once. Now it
 * stops at its instance lock, before it reads or writes anything: exit 1, one line without a
 * host path, its socket never created, the first bridge's task, events and guard unchanged.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  assertBuilt,
  call,
  eventTypes,
  getTask,
  killAll,
  makeSandbox,
  runToExit,
  type Sandbox,
  startBridge,
  submitParams,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { guardPath, mutationGate } from "./support/mcpSide.js"

let sandbox: Sandbox

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  await killAll()
  sandbox?.remove()
})

const expectRefused = (
  refused: { readonly code: number | null; readonly stdout: string; readonly stderr: string },
  code: string,
  directory: string
) => {
  expect(refused.code).toBe(1)
  expect(refused.stdout).toBe("")
  expect(refused.stderr).toBe(
    `ServerFS: bridge cannot start: ${code}: another serverfs-bridge is running on this ${directory}\n`
  )
  expect(refused.stderr).not.toContain(sandbox.base)
}

describe("a second bridge", () => {
  it("on the same state and lock directories → refused (STATE_DIRECTORY_UNSAFE), the first bridge's writer and guard untouched; after a SIGKILL of the first the guard still blocks → WORKDIR_RECOVERY_REQUIRED", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    const first = await startBridge(sandbox.env())
    const task = await call(
      first.client,
      "task.submit",
      submitParams({ prompt: "say:working\nwait:", profile: "workspace-write" }, "w1")
    )
    await waitForStatus(first.client, task.task_id, "running")
    await waitUntil("the writer's message", async () =>
      eventTypes(await allEvents(first.client, task.task_id)).includes("agent.message") ? true : undefined
    )
    const guardBefore = fs.readFileSync(guardPath(sandbox.lockDir, 1), "utf8")
    const eventsBefore = await allEvents(first.client, task.task_id)
    const viewBefore = await getTask(first.client, task.task_id)
    expect(mutationGate(sandbox.lockDir, 1)).toBe("WORKDIR_BUSY")

    const otherSocket = path.join(sandbox.base, "other", "bridge.sock")
    const refused = await runToExit(sandbox.env({ SERVERFS_AGENT_BRIDGE_SOCKET: otherSocket }))
    expectRefused(refused, "STATE_DIRECTORY_UNSAFE", "state directory")
    // Nothing of the second bridge exists: not its socket, not even the socket's directory.
    expect(fs.existsSync(path.dirname(otherSocket))).toBe(false)

    // The first bridge's task, its events and its guard are exactly as before.
    expect(await getTask(first.client, task.task_id)).toEqual(viewBefore)
    expect(await allEvents(first.client, task.task_id)).toEqual(eventsBefore)
    expect(fs.readFileSync(guardPath(sandbox.lockDir, 1), "utf8")).toBe(guardBefore)
    expect(mutationGate(sandbox.lockDir, 1)).toBe("WORKDIR_BUSY")

    // The crash the guard exists for: the flock goes with the process, the guard stays.
    expect((await first.kill()).signal).toBe("SIGKILL")
    expect(mutationGate(sandbox.lockDir, 1)).toBe("WORKDIR_RECOVERY_REQUIRED")
    expect(fs.readFileSync(guardPath(sandbox.lockDir, 1), "utf8")).toBe(guardBefore)
  })

  it("on another state directory but the same lock directory → refused (LOCK_PATH_UNSAFE), its own state never opened", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    const first = await startBridge(sandbox.env())
    const task = await call(
      first.client,
      "task.submit",
      submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
    )
    await waitForStatus(first.client, task.task_id, "running")
    const guardBefore = fs.readFileSync(guardPath(sandbox.lockDir, 1), "utf8")

    const otherState = path.join(sandbox.base, "state2")
    const otherSocket = path.join(sandbox.base, "other", "bridge.sock")
    const refused = await runToExit(
      sandbox.env({ SERVERFS_AGENT_BRIDGE_SOCKET: otherSocket, SERVERFS_AGENT_BRIDGE_STATE_DIR: otherState })
    )
    expectRefused(refused, "LOCK_PATH_UNSAFE", "lock directory")
    expect(fs.existsSync(path.dirname(otherSocket))).toBe(false)
    // Its own state directory was checked and locked, but no database was created in it.
    expect(fs.readdirSync(otherState)).toEqual(["bridge.lock"])
    expect((await getTask(first.client, task.task_id)).status).toBe("running")
    expect(fs.readFileSync(guardPath(sandbox.lockDir, 1), "utf8")).toBe(guardBefore)
  })

  it("once the first bridge is gone (SIGKILL), a new one starts on the same directories and reconciles", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    const first = await startBridge(sandbox.env())
    const task = await call(
      first.client,
      "task.submit",
      submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
    )
    await waitForStatus(first.client, task.task_id, "running")
    await first.kill()
    const second = await startBridge(sandbox.env())
    const view = await getTask(second.client, task.task_id)
    expect(view.status).toBe("interrupted")
    expect(view.error_code).toBe("BRIDGE_RESTARTED")
  })

  it("state and lock directory being one directory is one lock, not a conflict with itself", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    const env = sandbox.env({ SERVERFS_AGENT_LOCK_DIR: sandbox.stateDir })
    const first = await startBridge(env)
    const done = await call(first.client, "task.submit", submitParams({ prompt: "complete:ok" }, "w1"))
    await waitForStatus(first.client, done.task_id, "succeeded")
    const refused = await runToExit({
      ...env,
      SERVERFS_AGENT_BRIDGE_SOCKET: path.join(sandbox.base, "other", "bridge.sock")
    })
    expectRefused(refused, "STATE_DIRECTORY_UNSAFE", "state directory")
  })
})
