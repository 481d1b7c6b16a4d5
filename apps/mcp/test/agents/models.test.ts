import { type AgentStack, startAgentStack } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { expectNoHostPath, fails, ok, submit, waitForEnd } from "./support.js"

/**
 * list_agent_models and submit's `model` check through the real processes (tool-contracts §8,
 * bridge-internals §8): MCP SDK client → serverfs-mcp (stdio) → UDS → serverfs-bridge →
 * scripted runtime, whose list is fixed (scripted-large, default; scripted-small, hidden).
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

let stack: AgentStack

beforeAll(async () => {
  stack = await startAgentStack({ prefix: "serverfs-agent-models-" })
})

afterAll(async () => {
  await stack?.stop()
})

describe("list_agent_models", () => {
  it("lists the scripted runtime's models, normalized, without advice", async () => {
    const result = await ok(stack.client, "list_agent_models", { runtime: "fake" })
    expect(result).toMatchObject({
      runtime: "fake",
      status: "ok",
      scope: "runtime_catalog",
      source: "scripted"
    })
    expect(result.model_advice).toBeUndefined()
    const models = result.models as ReadonlyArray<Record<string, unknown>>
    expect(models.map((m) => m.id)).toEqual(["scripted-large", "scripted-small"])
    expect(models[0]).toMatchObject({
      display_name: "Scripted Large",
      enabled: true,
      is_default: true,
      hidden: false
    })
    expect(models[1]).toMatchObject({ is_default: false, hidden: true })
  })

  it("refuses a runtime no workdir allowlists with the authorization error", async () => {
    const refused = await fails(stack.client, "list_agent_models", { runtime: "codex" })
    expect(refused.code).toBe("AGENT_RUNTIME_NOT_ALLOWED")
  })

  it("advice mode runs submit's checks, then answers disabled (no advisor)", async () => {
    const result = await ok(stack.client, "list_agent_models", {
      runtime: "fake",
      workdir: "main",
      task_prompt: "refactor the parser"
    })
    expect(result.model_advice).toEqual({ status: "disabled", automatic: false })
    expect((result.models as ReadonlyArray<unknown>).length).toBe(2)
  })

  it("advice mode needs workdir and task_prompt together; path or profile alone are refused", async () => {
    for (const args of [
      { workdir: "main" },
      { task_prompt: "x" },
      { path: "src" },
      { profile: "review" },
      { workdir: "main", path: "src" }
    ]) {
      const refused = await fails(stack.client, "list_agent_models", { runtime: "fake", ...args })
      expect(refused.code, JSON.stringify(args)).toBe("INVALID_REQUEST")
    }
  })

  it("advice mode refuses what submit refuses: an unknown workdir, a missing start directory, a large prompt", async () => {
    const base = { runtime: "fake", workdir: "main", task_prompt: "x" }
    expect((await fails(stack.client, "list_agent_models", { ...base, workdir: "nowhere" })).code).toBe(
      "WORKDIR_NOT_FOUND"
    )
    const missing = await fails(stack.client, "list_agent_models", { ...base, path: "no/such/dir" })
    expect(missing.code).toBe("PATH_NOT_FOUND")
    expect(missing.text).not.toContain(stack.tree.base)
    const large = await fails(stack.client, "list_agent_models", { ...base, task_prompt: "x".repeat(65_537) })
    expect(large.code).toBe("AGENT_PROMPT_TOO_LARGE")
    expectNoHostPath(stack)
  })
})

describe("submit_agent_task model", () => {
  it("refuses a model the runtime does not list, and runs one it lists", async () => {
    const refused = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "hello",
      model: "no-such-model"
    })
    expect(refused.code).toBe("INVALID_REQUEST")
    expect(refused.text).toContain("list_agent_models")

    const taskId = await submit(stack.client, "hello", { model: "scripted-small" })
    const done = await waitForEnd(stack.client, taskId)
    expect(done.status).toBe("succeeded")
    expect(done.requested_model).toBe("scripted-small")
  })
})
