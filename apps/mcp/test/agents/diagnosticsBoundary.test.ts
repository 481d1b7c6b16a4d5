import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { OPERATOR_METHODS } from "@serverfs/domain"
import { type AgentStack, startAgentStack, waitForStatus } from "@serverfs/testkit"
import { Either, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { call, ok } from "./support.js"

/**
 * The MCP boundary of the operator plane (spec v0.22 §8.3, §12, §14 "MCP boundary"): serverfs-mcp
 * offers no diagnostics, metrics, lease or recovery tool, resource or prompt, and — whatever its
 * agent tools are asked — never calls the bridge's operator methods. The second half is measured,
 * not grepped: serverfs-mcp talks to the real bridge through a recording proxy socket that logs
 * the method of every request it forwards, while a client drives all ten agent tools.
 */

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

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
  "server_info"
]
const AGENT_TOOLS = [
  "list_agent_runtimes",
  "list_agent_models",
  "submit_agent_task",
  "get_agent_task",
  "read_agent_task_events",
  "read_agent_task_result",
  "respond_agent_approval",
  "answer_agent_question",
  "send_agent_message",
  "cancel_agent_task"
]
const OPERATOR_WORDS = /diagnos|metric|lease|recover|trace|span|doctor/i

const decodeMethod = Schema.decodeUnknownEither(Schema.parseJson(Schema.Struct({ method: Schema.String })))

/** A Unix socket that forwards each connection to `target` and records each request's method. */
const recordingProxy = async (listenPath: string, target: string) => {
  const methods: Array<string> = []
  const server = net.createServer((client) => {
    const upstream = net.createConnection(target)
    let pending = ""
    client.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8")
      for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
        const decoded = decodeMethod(pending.slice(0, nl))
        methods.push(Either.isRight(decoded) ? decoded.right.method : "(undecodable)")
        pending = pending.slice(nl + 1)
      }
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => client.write(chunk))
    client.on("end", () => upstream.end())
    upstream.on("end", () => client.end())
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(listenPath, resolve))
  return {
    methods: () => [...methods],
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

let stack: AgentStack
let proxy: Awaited<ReturnType<typeof recordingProxy>>

beforeAll(async () => {
  stack = await startAgentStack({ prefix: "serverfs-mcp-boundary-" })
  const dir = path.join(stack.tree.base, "proxy")
  fs.mkdirSync(dir, { mode: 0o700 })
  const bridgeSocket = stack.env.SERVERFS_AGENT_BRIDGE_SOCKET
  if (bridgeSocket === undefined) throw new Error("no bridge socket")
  proxy = await recordingProxy(path.join(dir, "bridge.sock"), bridgeSocket)
})

afterAll(async () => {
  await proxy?.close()
  await stack?.stop()
})

describe("serverfs-mcp and the operator plane", () => {
  it("lists exactly the filesystem and agent tools: no diagnostics, metrics, lease or recovery tool, resource or prompt", async () => {
    const client = stack.client
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect([...names].sort()).toEqual([...FILESYSTEM_TOOLS, ...AGENT_TOOLS].sort())
    for (const name of names) expect(name).not.toMatch(OPERATOR_WORDS)
    const resources = await client.listResources()
    const templates = await client.listResourceTemplates()
    for (const r of [...resources.resources, ...templates.resourceTemplates]) {
      expect(JSON.stringify(r)).not.toMatch(OPERATOR_WORDS)
    }
    expect(client.getServerCapabilities()?.prompts).toBeUndefined()
  })

  it("drives all ten agent tools through a recording proxy: only task methods reach the bridge, never an operator method", async () => {
    const mcp = await stack.startMcp({
      SERVERFS_AGENT_BRIDGE_SOCKET: path.join(stack.tree.base, "proxy", "bridge.sock")
    })
    const client = mcp.client
    await ok(client, "list_agent_runtimes")
    await ok(client, "list_agent_models", { runtime: "fake" })
    const submitted = await ok(client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      profile: "review",
      prompt: "approval:make build\nquestion:Which one?\nsteer:"
    })
    const taskId = submitted.task_id as string
    const asking = await waitForStatus(client, taskId, ["waiting_for_approval"])
    const approval = (asking.pending_request as { request_id: string }).request_id
    await ok(client, "respond_agent_approval", {
      task_id: taskId,
      request_id: approval,
      decision: "approve_once"
    })
    const questioning = await waitForStatus(client, taskId, ["waiting_for_question"])
    const question = (questioning.pending_request as { request_id: string }).request_id
    await ok(client, "answer_agent_question", {
      task_id: taskId,
      request_id: question,
      answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
    })
    await waitForStatus(client, taskId, ["running"])
    // Queued for the scripted runtime's `steer` step, which returns it as the result.
    await ok(client, "send_agent_message", { task_id: taskId, message: "go on" })
    await waitForStatus(client, taskId, ["succeeded"])
    await ok(client, "read_agent_task_events", { task_id: taskId })
    // An inline result answers AGENT_RESULT_NOT_RETRIEVABLE: still a task.result.read call.
    await call(client, "read_agent_task_result", { task_id: taskId })
    const waiting = await ok(client, "submit_agent_task", {
      runtime: "fake",
      workdir: "main",
      profile: "review",
      prompt: "wait:"
    })
    await ok(client, "cancel_agent_task", { task_id: waiting.task_id })
    await mcp.close()

    const seen = new Set(proxy.methods())
    // The proxy saw the traffic (so the check below can fail) ...
    for (const method of [
      "runtime.list",
      "runtime.models",
      "task.submit",
      "task.get",
      "task.events",
      "task.result.read",
      "task.approval.respond",
      "task.question.answer",
      "task.message.send",
      "task.cancel"
    ]) {
      expect(seen, method).toContain(method)
    }
    // ... and none of it was an operator method.
    for (const method of Object.keys(OPERATOR_METHODS)) expect(seen, method).not.toContain(method)
    expect(seen).not.toContain("(undecodable)")
  })
})
