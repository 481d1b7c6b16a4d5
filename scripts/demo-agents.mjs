#!/usr/bin/env node
// `npm run demo:agents`: the agent plane on the embedded default. Starts serverfs-bridge with
// the scripted test runtime and serverfs-mcp on a temporary read-write copy of the demo
// workdir, then delegates a task over MCP: an approval relayed to "the chat", a mutation
// refused by the writer lease while the agent works, the answer, the events and the result.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { root } from "./demo-env.mjs"

const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-demo-agents-"))
const workdir = path.join(base, "workdir")
fs.cpSync(path.join(root, "examples/demo-workdir"), workdir, { recursive: true })
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  SERVERFS_LOG_LEVEL: "WARNING",
  WORKDIR_01_ALIAS: "demo",
  WORKDIR_01_PATH: workdir,
  WORKDIR_01_READ_ONLY: "false",
  WORKDIR_01_AGENT_MODE: "workspace-write",
  WORKDIR_01_AGENT_RUNTIMES: "fake",
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_BRIDGE_SOCKET: path.join(base, "run", "bridge.sock"),
  SERVERFS_AGENT_LOCK_DIR: path.join(base, "locks"),
  SERVERFS_AGENT_BRIDGE_STATE_DIR: path.join(base, "state"),
  SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "true"
}

const bridge = spawn(process.execPath, [path.join(root, "apps/bridge/dist/bundle/serverfs-bridge.js")], {
  env,
  stdio: ["ignore", "ignore", "pipe"]
})
let bridgeLog = ""
bridge.stderr.on("data", (chunk) => {
  bridgeLog += chunk
})
const exited = new Promise((_, reject) =>
  bridge.on("exit", (code) => reject(new Error(`the bridge exited (${code}): ${bridgeLog}`)))
)
// The bridge is ready once its socket is published (it is bound only after startup checks).
await Promise.race([
  (async () => {
    while (!fs.existsSync(env.SERVERFS_AGENT_BRIDGE_SOCKET)) await new Promise((r) => setTimeout(r, 50))
  })(),
  exited
])

const client = new Client({ name: "serverfs-demo-agents", version: "1.0.0" })
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [path.join(root, "apps/mcp/dist/bundle/serverfs-mcp.js")],
    env
  })
)
const show = (title, value) =>
  console.log(`\n== ${title}\n${typeof value === "string" ? value : JSON.stringify(value, null, 2)}`)
const call = async (name, args = {}) => {
  const result = await client.callTool({ name, arguments: args })
  return result.isError ? result.content[0].text : result.structuredContent
}
const waitFor = async (taskId, statuses) => {
  for (;;) {
    const task = await call("get_agent_task", { task_id: taskId })
    if (typeof task === "string" || ["failed", "interrupted", "cancelled"].includes(task.status)) {
      if (!statuses.includes(task.status)) throw new Error(`unexpected task state: ${JSON.stringify(task)}`)
    }
    if (statuses.includes(task.status)) return task
    await new Promise((r) => setTimeout(r, 100))
  }
}

try {
  show("list_agent_runtimes", await call("list_agent_runtimes"))
  const prompt = [
    "say:Looking at the release checklist.",
    "approval:npm test",
    "write:REPORT.md=Release report: all checks passed.",
    "complete:The release report is in REPORT.md."
  ].join("\n")
  const submitted = await call("submit_agent_task", {
    runtime: "fake",
    workdir: "demo",
    prompt,
    correlation_id: "demo-1"
  })
  show("submit_agent_task (returns at once)", submitted)
  const waiting = await waitFor(submitted.task_id, ["waiting_for_approval"])
  show("the agent asks for approval", waiting.pending_request)
  show(
    "meanwhile a mutation is refused: the agent holds the writer lease",
    await call("create_text_file", { workdir: "demo", path: "notes2.txt", content: "x" })
  )
  show(
    "respond_agent_approval approve_once",
    await call("respond_agent_approval", {
      task_id: submitted.task_id,
      request_id: waiting.pending_request_id,
      decision: "approve_once"
    })
  )
  const done = await waitFor(submitted.task_id, ["succeeded", "failed", "cancelled", "interrupted"])
  show("final state", {
    status: done.status,
    final_response: done.final_response,
    manifest_sha256: done.manifest_sha256
  })
  const events = await call("read_agent_task_events", { task_id: submitted.task_id })
  show(
    "events",
    events.events.map((e) => `${e.event_id} ${e.event_type} ${JSON.stringify(e.payload)}`).join("\n")
  )
  show(
    "the file the agent wrote",
    (await call("read_text_file", { workdir: "demo", path: "REPORT.md" })).content
  )
  show(
    "and mutations are accepted again",
    await call("create_text_file", { workdir: "demo", path: "notes2.txt", content: "x" })
  )
} finally {
  await client.close()
  bridge.kill("SIGTERM")
  await new Promise((resolve) => bridge.on("exit", resolve))
  fs.rmSync(base, { recursive: true, force: true })
}
console.log(
  "\nDemo finished: a delegated task, its approval relayed through MCP, and the writer lease at work."
)
