/**
 * list_agent_models with the real Claude Code CLI (the SDK's bundled binary, an isolated offline
 * sandbox, a loopback fake Messages API) through serverfs-mcp and the bridge: the Agent SDK's
 * supportedModels() of a query that is never given a prompt — the CLI starts, answers and is
 * stopped, and the fake model server receives no request at all. A listed alias runs a task; an
 * unlisted name is refused.
 */
import { waitForStatus } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClaudeStack, fails, ok, startClaudeStack, submitWhenFree } from "./support.js"

let cs: ClaudeStack

beforeAll(async () => {
  cs = await startClaudeStack("sfc-models-")
}, 120_000)

afterAll(async () => {
  await cs?.stop()
}, 60_000)

const client = () => cs.stack.client

describe("list_agent_models with the real Claude Code", () => {
  it("lists the CLI's models for the account without any request to the model server", async () => {
    cs.server.clear()
    const result = await ok(client(), "list_agent_models", { runtime: "claude" })
    expect(result).toMatchObject({
      runtime: "claude",
      status: "ok",
      scope: "current_account",
      source: "claude_agent_sdk"
    })
    const models = result.models as ReadonlyArray<Record<string, unknown>>
    expect(models.length).toBeGreaterThan(0)
    expect(models.find((m) => m.id === "default")).toMatchObject({ is_default: true, enabled: true })
    expect(models.some((m) => m.id === "sonnet")).toBe(true)
    expect(cs.server.requests()).toEqual([])
    expect(JSON.stringify(result)).not.toContain(cs.stack.tree.base)
    expect(JSON.stringify(result)).not.toContain(cs.sandbox.base)

    const { runtimes } = (await ok(client(), "list_agent_runtimes")) as {
      runtimes: ReadonlyArray<Record<string, unknown>>
    }
    expect(runtimes[0]).toMatchObject({ model_override: true, model_discovery: "current_account" })
  }, 120_000)

  it("submit: an unlisted model is refused; a listed alias runs the task", async () => {
    const refused = await fails(client(), "submit_agent_task", {
      runtime: "claude",
      workdir: "main",
      prompt: "hi",
      model: "no-such-model"
    })
    expect(refused.code).toBe("INVALID_REQUEST")
    cs.server.clear()
    const { taskId } = await submitWhenFree(client(), "Say hi", { model: "sonnet" })
    const done = await waitForStatus(client(), taskId, ["succeeded", "failed"], 90_000)
    expect(done.status).toBe("succeeded")
    expect(done.requested_model).toBe("sonnet")
    expect(cs.server.modelRequests().length).toBeGreaterThan(0)
  }, 180_000)
})
