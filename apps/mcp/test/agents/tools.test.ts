import * as fs from "node:fs"
import { type AgentStack, startAgentStack } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { expectNoHostPath, fails, ok, submit, waitForEnd } from "./support.js"

/**
 * The agent tool surface as a chat client sees it (tool-contracts §1, §8; spec v0.3 §14): which
 * tools are registered under which configuration, their annotations, and what
 * list_agent_runtimes reveals. Real processes: MCP SDK client → serverfs-mcp (stdio) → UDS →
 * serverfs-bridge → scripted runtime.
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

let stack: AgentStack

const FILESYSTEM_TOOLS = [
  "list_workdirs",
  "list_directory",
  "find_files",
  "search_text",
  "read_text_file",
  "stat_file",
  "create_text_file",
  "edit_text_file",
  "delete_file",
  "create_directory",
  "delete_directory",
  // Beyond the reference: always served, read-only (docs/tools.md#server_info).
  "server_info"
]

const READ = { readOnlyHint: true, openWorldHint: false }
const write = (destructive: boolean, idempotent: boolean) => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: true
})

/** The reference annotations of the ten agent tools (tool-contracts §1). */
const AGENT_ANNOTATIONS: Record<string, Record<string, boolean>> = {
  list_agent_runtimes: READ,
  list_agent_models: READ,
  get_agent_task: READ,
  read_agent_task_events: READ,
  read_agent_task_result: READ,
  submit_agent_task: write(true, false),
  respond_agent_approval: write(true, true),
  answer_agent_question: write(false, true),
  send_agent_message: write(true, false),
  cancel_agent_task: write(true, true)
}

beforeAll(async () => {
  stack = await startAgentStack({
    prefix: "serverfs-agent-tools-",
    setup: (tree) => fs.mkdirSync(`${tree.base}/second`),
    env: (tree) => ({
      WORKDIR_02_ALIAS: "second",
      WORKDIR_02_PATH: `${tree.base}/second`,
      WORKDIR_02_READ_ONLY: "false",
      WORKDIR_02_AGENT_MODE: "review",
      WORKDIR_02_AGENT_RUNTIMES: "fake"
    })
  })
})

afterAll(async () => {
  await stack?.stop()
})

const toolNames = async (env: Record<string, string>): Promise<ReadonlyArray<string>> => {
  const mcp = await stack.startMcp(env)
  try {
    return (await mcp.client.listTools()).tools.map((t) => t.name)
  } finally {
    await mcp.close()
  }
}

describe("agent tool registration", () => {
  it("registers the ten agent tools, with the reference annotations, beside the eleven filesystem tools and server_info", async () => {
    const { tools } = await stack.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(
      [...FILESYSTEM_TOOLS, ...Object.keys(AGENT_ANNOTATIONS)].sort()
    )
    for (const [name, annotations] of Object.entries(AGENT_ANNOTATIONS)) {
      const tool = tools.find((t) => t.name === name)
      expect(tool?.annotations, name).toEqual(annotations)
      expect(tool?.inputSchema.type).toBe("object")
      expect(tool?.outputSchema?.type, name).toBe("object")
      // Bridge results pass through unchanged, fields a newer bridge adds included.
      expect(JSON.stringify(tool?.outputSchema), name).not.toContain('"additionalProperties":false')
    }
    // The filesystem tools' own results are closed.
    expect(tools.find((t) => t.name === "list_workdirs")?.outputSchema?.additionalProperties).toBe(false)
    // The schema bounds a client sees are the contract's.
    const schema = (tool: string, field: string) =>
      tools.find((t) => t.name === tool)?.inputSchema.properties?.[field] as Record<string, unknown>
    expect(schema("read_agent_task_events", "limit")).toMatchObject({
      minimum: 1,
      maximum: 500,
      default: 100
    })
    expect(schema("read_agent_task_events", "after_event_id")).toMatchObject({ minimum: 0, default: 0 })
    expect(schema("read_agent_task_result", "max_bytes")).toMatchObject({
      minimum: 1,
      maximum: 65536,
      default: 65536
    })
    expect(schema("submit_agent_task", "profile")).toMatchObject({ default: "workspace-write" })
    expect(JSON.stringify(tools)).not.toContain(stack.tree.base)
  })

  it("registers no agent tool when the bridge is disabled (12 tools: eleven filesystem tools and server_info)", async () => {
    const disabled = {
      SERVERFS_AGENT_BRIDGE_ENABLED: "false",
      WORKDIR_01_AGENT_MODE: "disabled",
      WORKDIR_01_AGENT_RUNTIMES: "",
      WORKDIR_02_AGENT_MODE: "disabled",
      WORKDIR_02_AGENT_RUNTIMES: ""
    }
    expect([...(await toolNames(disabled))].sort()).toEqual([...FILESYSTEM_TOOLS].sort())
    // A value that is not a boolean means false (a lenient switch, tool-contracts §4.1).
    expect(await toolNames({ ...disabled, SERVERFS_AGENT_BRIDGE_ENABLED: "maybe" })).toHaveLength(12)
  })

  it("registers no agent tool when every workdir's Agent mode is disabled, bridge enabled (12 tools: eleven filesystem tools and server_info)", async () => {
    const mcp = await stack.startMcp({
      WORKDIR_01_AGENT_MODE: "disabled",
      WORKDIR_01_AGENT_RUNTIMES: "",
      WORKDIR_02_AGENT_MODE: "disabled",
      WORKDIR_02_AGENT_RUNTIMES: ""
    })
    try {
      const names = (await mcp.client.listTools()).tools.map((t) => t.name)
      expect([...names].sort()).toEqual([...FILESYSTEM_TOOLS].sort())
      // An unregistered tool is unknown, not a disabled tool.
      await expect(
        mcp.client.callTool({ name: "submit_agent_task", arguments: { runtime: "fake", workdir: "main" } })
      ).rejects.toThrow(/^MCP error -32602: INVALID_ARGUMENT: unknown tool/)
    } finally {
      await mcp.close()
    }
  })
})

describe("list_agent_runtimes", () => {
  it("shows the scripted runtime where a workdir allowlists it, with its capabilities", async () => {
    const { runtimes } = (await ok(stack.client, "list_agent_runtimes")) as {
      runtimes: ReadonlyArray<Record<string, unknown>>
    }
    expect(runtimes.find((r) => r.name === "fake")).toEqual({
      name: "fake",
      available: true,
      version: "scripted-1",
      persistent_session: true,
      live_steer: true,
      interactive_approval: true,
      interactive_question: true,
      in_flight_recovery: "none",
      model_override: true,
      model_discovery: "runtime_catalog"
    })
    // Only names some workdir allowlists are ever shown.
    expect(runtimes.map((r) => r.name)).toEqual(["fake"])
  })

  it("hides the scripted runtime from a server on which no workdir allowlists it, though the bridge runs it", async () => {
    const mcp = await stack.startMcp({
      WORKDIR_01_AGENT_RUNTIMES: "codex",
      WORKDIR_02_AGENT_MODE: "disabled",
      WORKDIR_02_AGENT_RUNTIMES: ""
    })
    try {
      const result = (await mcp.client.callTool({ name: "list_agent_runtimes", arguments: {} })) as {
        structuredContent?: { runtimes: ReadonlyArray<{ name: string }> }
      }
      const names = result.structuredContent?.runtimes.map((r) => r.name)
      expect(names).toBeDefined()
      expect(names).not.toContain("fake")
      for (const name of names ?? []) expect(name).toBe("codex")
    } finally {
      await mcp.close()
    }
  })
})

describe("continue_from_task_id", () => {
  it("must keep the workdir: another one gives AGENT_SESSION_NOT_RESUMABLE from the bridge", async () => {
    const first = await submit(stack.client, "complete:first turn")
    await waitForEnd(stack.client, first, ["succeeded"])
    const otherWorkdir = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "second",
      profile: "review",
      prompt: "go on",
      continue_from_task_id: first
    })
    expect(otherWorkdir.text).toBe("AGENT_SESSION_NOT_RESUMABLE: the task to continue ran in another workdir")
    // The same runtime and workdir continue the provider session in a new task.
    const next = await submit(stack.client, "complete:second turn", { continue_from_task_id: first })
    expect(next).not.toBe(first)
    const done = await waitForEnd(stack.client, next, ["succeeded"])
    expect(done).toMatchObject({ continue_from_task_id: first, final_response: "second turn" })
    // A review task cannot be continued as workspace-write (no escalation through continuation).
    const reviewed = await submit(stack.client, "complete:reviewed", { profile: "review" })
    await waitForEnd(stack.client, reviewed, ["succeeded"])
    const escalated = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      prompt: "go on",
      continue_from_task_id: reviewed
    })
    expect(escalated.text).toBe(
      "AGENT_PROFILE_NOT_ALLOWED: a review task cannot be continued as workspace-write"
    )
  })

  it("no host path in anything the client received", () => {
    expectNoHostPath(stack)
  })
})
