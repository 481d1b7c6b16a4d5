/**
 * list_agent_models with the real Codex (stdio app-server, the pinned binary, a test CODEX_HOME,
 * a loopback fake Responses API) through serverfs-mcp and the bridge: Codex's own catalog via
 * `model/list`, normalized; discovery makes no model request; a listed model runs a task and an
 * unlisted one is refused. Beside it a runtime that is down (claude, its CLI missing) answers
 * `unavailable`.
 */
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  codexBin,
  type FakeResponsesServer,
  makeCodexHome,
  startAgentStack,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectStatus, fails, ok, stopStdioStack, submitCodex } from "./support.js"

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack

beforeAll(async () => {
  server = await startFakeResponsesServer()
  home = makeCodexHome({ baseUrl: server.baseUrl })
  stack = await startAgentStack({
    prefix: "sfx-codex-models-",
    env: (tree) => ({
      WORKDIR_01_AGENT_RUNTIMES: "codex,claude",
      SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false",
      SERVERFS_CODEX_BIN: codexBin,
      SERVERFS_CODEX_HOME: home.path,
      SERVERFS_CODEX_TRANSPORT: "stdio",
      SERVERFS_CODEX_REQUEST_TIMEOUT_SECONDS: "30",
      SERVERFS_CLAUDE_BIN: path.join(tree.base, "no-such-claude")
    })
  })
}, 120_000)

afterAll(() => stopStdioStack(stack, home, server), 60_000)

describe("list_agent_models with the real Codex", () => {
  it("lists Codex's catalog from model/list without a model request", async () => {
    server.reset()
    const result = await ok(stack.client, "list_agent_models", { runtime: "codex" })
    expect(result).toMatchObject({
      runtime: "codex",
      status: "ok",
      scope: "runtime_catalog",
      source: "codex_app_server"
    })
    const models = result.models as ReadonlyArray<Record<string, unknown>>
    expect(models.length).toBeGreaterThan(1)
    expect(models.length).toBeLessThanOrEqual(64)
    // The configured model (CodexHome) is in the bundled catalog; hidden ones are listed too.
    expect(models.find((m) => m.id === "gpt-5.5")).toMatchObject({
      display_name: expect.any(String),
      enabled: true,
      hidden: false,
      reasoning: { supported: expect.arrayContaining(["low"]) }
    })
    expect(models.some((m) => m.hidden === true)).toBe(true)
    expect(models.filter((m) => m.is_default === true)).toHaveLength(1)
    expect(server.requests()).toHaveLength(0)
    expect(JSON.stringify(result)).not.toContain(stack.tree.base)

    const { runtimes } = (await ok(stack.client, "list_agent_runtimes")) as {
      runtimes: ReadonlyArray<Record<string, unknown>>
    }
    expect(runtimes.find((r) => r.name === "codex")).toMatchObject({
      model_override: true,
      model_discovery: "runtime_catalog"
    })
  })

  it("a runtime that is down answers unavailable", async () => {
    expect(await ok(stack.client, "list_agent_models", { runtime: "claude" })).toEqual({
      runtime: "claude",
      status: "unavailable",
      scope: "none",
      source: "claude",
      models: [],
      detail: "runtime is unavailable"
    })
  })

  it("submit: an unlisted model is refused; a listed one runs the task with it", async () => {
    server.reset()
    const refused = await fails(stack.client, "submit_agent_task", {
      runtime: "codex",
      workdir: "main",
      prompt: "hi",
      model: "no-such-model"
    })
    expect(refused.code).toBe("INVALID_REQUEST")
    server.script({ type: "message", text: "ran on the listed model" })
    const taskId = await submitCodex(stack.client, "hi", { model: "gpt-5.5" })
    const task = await expectStatus(stack.client, taskId, "succeeded")
    expect(task.requested_model).toBe("gpt-5.5")
    expect(server.requests().length).toBeGreaterThan(0)
    expect(server.requests().every((r) => r.body.model === "gpt-5.5")).toBe(true)
  })
})
