/**
 * Bridge crash while a Claude approval waits, seen from the MCP client: the task comes back
 * interrupted (BRIDGE_RESTARTED), the approval is stale, nothing ran, the workdir is usable again
 * once the old CLI is proven gone, and continue_from_task_id resumes the same Claude session.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { bashReply, messageTexts, readAllEvents, textReply, waitForStatus } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClaudeStack, fails, finished, ok, startClaudeStack, submitWhenFree } from "./support.js"

let cs: ClaudeStack

beforeAll(async () => {
  cs = await startClaudeStack("sfc-e2r-")
})

afterAll(async () => {
  await cs?.stop()
})

const empty = { method: "", path: "", headers: {}, body: undefined }

describe("Claude through serverfs-mcp: bridge restart during an approval", () => {
  it("interrupts, never answers, frees the workdir, and continues the session", async () => {
    const client = cs.stack.client
    const command = `python3 -c "open('crash.txt','w').write('x')"`
    cs.server.queue([bashReply(command, "Write a file")])
    const { taskId } = await submitWhenFree(client, "Write crash.txt")
    const waiting = await waitForStatus(client, taskId, ["waiting_for_approval"], 60_000)
    const requestId = (waiting.pending_request as { request_id: string }).request_id

    await cs.stack.bridge.kill("SIGKILL")
    await cs.stack.bridge.restart()

    const task = await finished(client, taskId)
    expect(task).toMatchObject({ status: "interrupted", error_code: "BRIDGE_RESTARTED" })
    const late = await fails(client, "respond_agent_approval", {
      task_id: taskId,
      request_id: requestId,
      decision: "approve_once"
    })
    expect(late.code).toBe("REQUEST_STALE")
    const events = await readAllEvents(client, taskId)
    expect(events.find((e) => e.event_type === "task.reconciled")?.payload).toMatchObject({
      status: "SESSION_RESUMABLE",
      provider_active: false
    })
    expect(fs.existsSync(path.join(cs.stack.tree.root, "crash.txt"))).toBe(false)
    // The workdir is not left in recovery: MCP mutations work again.
    await ok(client, "create_text_file", { workdir: "main", path: "after-restart.txt", content: "ok\n" })

    cs.server.clear()
    cs.server.queue([textReply("Picking up again.")])
    const next = await submitWhenFree(client, "Continue from there", { continue_from_task_id: taskId })
    expect(await finished(client, next.taskId)).toMatchObject({
      status: "succeeded",
      final_response: "Picking up again."
    })
    const texts = messageTexts(cs.server.modelRequests()[0] ?? empty).join("\n")
    expect(texts).toContain("Write crash.txt")
    expect(texts).toContain("Continue from there")

    for (const text of cs.stack.received()) {
      expect(text).not.toContain(cs.stack.tree.base)
      expect(text).not.toContain(cs.sandbox.base)
    }
  })
})
