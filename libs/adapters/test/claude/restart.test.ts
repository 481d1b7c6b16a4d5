/**
 * Bridge restart during a pending Claude approval, through the real `serverfs-bridge` process and
 * the real CLI (spec v0.3 §19/§20): SIGKILL the bridge while the approval waits, start it again —
 * the task is interrupted (never answered, never re-run), the old CLI is proven gone so the
 * workdir's recovery guard goes, and a continue_from_task_id task resumes the same Claude session:
 * the model sees the prior conversation.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import {
  agentStackEnv,
  type BridgeProcess,
  bashReply,
  bridgeCall,
  bundledClaudeBinary,
  type ClaudeSandbox,
  eventuallyAsync,
  type FakeMessagesServer,
  makeClaudeSandbox,
  makeTempTree,
  messageTexts,
  startBridgeProcess,
  startFakeMessagesServer,
  type TempTree,
  textReply
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { processesIn, waitForNoProcessesIn, waitUntil } from "./support.js"

let server: FakeMessagesServer
let sandbox: ClaudeSandbox
let tree: TempTree
let bridge: BridgeProcess | undefined

beforeAll(async () => {
  server = await startFakeMessagesServer()
  sandbox = makeClaudeSandbox(server.url)
  tree = makeTempTree("sfc-bridge-")
})

afterAll(async () => {
  await bridge?.kill("SIGTERM")
  await waitForNoProcessesIn(tree.root)
  await server.close()
  tree.remove()
  sandbox.remove()
})

const socket = () => `${tree.base}/run/bridge.sock`

const call = async (method: string, params: Record<string, unknown>) => {
  const response = await bridgeCall(socket(), method, params)
  if (!response.ok || response.result === undefined) {
    throw new Error(`${method} failed: ${response.error?.code}: ${response.error?.message}`)
  }
  return response.result
}

const statusOf = async (taskId: string, wanted: ReadonlyArray<string>) =>
  waitUntilAsync(`task ${taskId} ${wanted.join("|")}`, async () => {
    const task = await call("task.get", { task_id: taskId })
    return wanted.includes(String(task.status)) ? task : undefined
  })

const waitUntilAsync = <A>(
  what: string,
  probe: () => Promise<A | undefined>,
  timeoutMs = 30_000
): Promise<A> => eventuallyAsync(what, probe, timeoutMs, 50)

describe("Claude through the bridge: restart during a pending approval", () => {
  it("interrupts the task, proves the CLI gone, and continues the same session", async () => {
    const env = {
      ...agentStackEnv(tree),
      ...sandbox.env,
      WORKDIR_01_AGENT_RUNTIMES: "claude",
      SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false",
      SERVERFS_CLAUDE_BIN: bundledClaudeBinary()
    }
    bridge = await startBridgeProcess(env)
    const command = `python3 -c "open('restart.txt','w').write('x')"`
    server.queue([bashReply(command, "Write a file")])
    const submitted = await call("task.submit", {
      runtime: "claude",
      workdir: "main",
      path: "",
      profile: "workspace-write",
      prompt: "Please write restart.txt"
    })
    const taskId = String(submitted.task_id)
    const waiting = await statusOf(taskId, ["waiting_for_approval"])
    expect(waiting.pending_request).toMatchObject({
      kind: "approval",
      payload: { category: "command", command_display: command }
    })
    const cli = processesIn(tree.root)
    expect(cli.length).toBeGreaterThan(0)

    await bridge.kill("SIGKILL")
    await bridge.restart()

    const task = await statusOf(taskId, ["interrupted"])
    expect(task.error_code).toBe("BRIDGE_RESTARTED")
    expect(task.pending_request ?? null).toBeNull()
    const events = (await call("task.events", { task_id: taskId, after_event_id: 0, limit: 500 }))
      .events as ReadonlyArray<{
      readonly event_type: string
      readonly payload: Record<string, unknown>
    }>
    expect(events.find((e) => e.event_type === "task.reconciled")?.payload).toEqual({
      status: "SESSION_RESUMABLE",
      provider_active: false,
      error_code: "BRIDGE_RESTARTED"
    })
    // The old CLI is gone and the approval was never answered: nothing was written.
    await waitUntil(
      "the old CLI to be gone",
      () => (processesIn(tree.root).length === 0 ? true : undefined),
      10_000
    )
    expect(fs.existsSync(path.join(tree.root, "restart.txt"))).toBe(false)
    expect(fs.readdirSync(path.join(tree.base, "locks", "active"))).toEqual([])

    server.clear()
    server.queue([textReply("Resumed where we left off.")])
    const next = await call("task.submit", {
      runtime: "claude",
      workdir: "main",
      path: "",
      profile: "workspace-write",
      prompt: "Continue, please",
      continue_from_task_id: taskId
    })
    const done = await statusOf(String(next.task_id), ["succeeded", "failed", "interrupted", "cancelled"])
    expect(done).toMatchObject({ status: "succeeded", final_response: "Resumed where we left off." })
    const [resumed] = server.modelRequests()
    const texts = messageTexts(resumed ?? { method: "", path: "", headers: {}, body: undefined }).join("\n")
    expect(texts).toContain("Please write restart.txt")
    expect(texts).toContain("Continue, please")
    const toolUses = (resumed?.body?.messages ?? []).flatMap((m) =>
      Array.isArray(m.content)
        ? (m.content as ReadonlyArray<Record<string, unknown>>).filter((b) => b.type === "tool_use")
        : []
    )
    expect(toolUses).toEqual([
      expect.objectContaining({ name: "Bash", input: { command, description: "Write a file" } })
    ])
  })
})
