import * as fs from "node:fs"
import * as net from "node:net"
import { type AgentStack, startAgentStack } from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { auditArrived, auditOf, expectNoHostPath, fails, ok, submit, waitForEnd } from "./support.js"

/**
 * Local authorization of submit_agent_task (tool-contracts §8): workdir, Agent mode, runtime,
 * profile and the start directory are checked by serverfs-mcp itself and a refusal makes no
 * RPC at all. Proven with the bridge stopped and a counting listener in its socket's place: the
 * refusals are answered exactly and nothing connects; only a submission that passes every local
 * check reaches the socket, and then the client gets AGENT_BRIDGE_UNAVAILABLE.
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

let stack: AgentStack
let socketPath: string
let listener: net.Server | undefined
let connections = 0

beforeAll(async () => {
  stack = await startAgentStack({
    prefix: "serverfs-agent-authz-",
    setup: (tree) => {
      tree.file("notes.txt", "a file, not a directory\n")
      tree.dir("docs/guide")
      tree.dir(".hidden")
      tree.dir("keys.pem")
      tree.dir(".serverfs-tmp-0123456789abcdef")
      tree.symlink("linkdir", `${tree.root}/docs`)
      tree.symlink("docs/out", tree.outside)
      fs.mkdirSync(`${tree.base}/plain`)
      fs.mkdirSync(`${tree.base}/rev`)
    },
    env: (tree) => ({
      WORKDIR_02_ALIAS: "plain",
      WORKDIR_02_PATH: `${tree.base}/plain`,
      WORKDIR_02_AGENT_MODE: "disabled",
      WORKDIR_03_ALIAS: "rev",
      WORKDIR_03_PATH: `${tree.base}/rev`,
      WORKDIR_03_AGENT_MODE: "review",
      WORKDIR_03_AGENT_RUNTIMES: "fake"
    })
  })
  socketPath = stack.env.SERVERFS_AGENT_BRIDGE_SOCKET ?? ""
})

afterAll(async () => {
  listener?.close()
  await stack?.stop()
})

const submitArgs = (overrides: Record<string, unknown>) => ({
  runtime: "fake",
  workdir: "main",
  prompt: "complete:never sent",
  ...overrides
})

/** Refusals made by serverfs-mcp itself, with their exact text. */
const LOCAL_REFUSALS: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
  [{ workdir: "nope" }, "WORKDIR_NOT_FOUND: 'nope' is not a configured workdir"],
  [{ workdir: "plain" }, "AGENT_DISABLED: Agent delegation is disabled for plain"],
  [{ runtime: "codex" }, "AGENT_RUNTIME_NOT_ALLOWED: runtime 'codex' is not allowed for main"],
  [{ runtime: "claude" }, "AGENT_RUNTIME_NOT_ALLOWED: runtime 'claude' is not allowed for main"],
  [
    { workdir: "rev", profile: "workspace-write" },
    "AGENT_PROFILE_NOT_ALLOWED: profile workspace-write is not allowed for runtime fake in rev"
  ],
  [{ path: "../x" }, "PATH_OUTSIDE_WORKDIR: main:../x — resolved path escapes the workdir"],
  [{ path: "docs/../../x" }, "PATH_OUTSIDE_WORKDIR: main:docs/../../x — resolved path escapes the workdir"],
  [{ path: "/etc" }, "PATH_OUTSIDE_WORKDIR"],
  [{ path: ".hidden" }, "HIDDEN_PATH_NOT_ALLOWED"],
  [{ path: "docs/.git" }, "HIDDEN_PATH_NOT_ALLOWED"],
  [{ path: "keys.pem" }, "DENIED_PATH"],
  [{ path: ".serverfs-tmp-0123456789abcdef" }, "RESERVED_PATH"],
  [{ path: "missing" }, "PATH_NOT_FOUND"],
  [{ path: "docs/missing/deeper" }, "PATH_NOT_FOUND"],
  [{ path: "notes.txt" }, "NOT_A_DIRECTORY"],
  [{ path: "linkdir" }, "SYMLINK_NOT_ALLOWED"],
  [{ path: "linkdir/guide" }, "SYMLINK_NOT_ALLOWED"],
  [{ path: "docs/out" }, "SYMLINK_NOT_ALLOWED"]
]

describe("local authorization of submit_agent_task", () => {
  it("with the bridge up, a valid submission runs", async () => {
    const id = await submit(stack.client, "complete:fine", { path: "docs/guide" })
    expect(await waitForEnd(stack.client, id, ["succeeded"])).toMatchObject({ relative_cwd: "docs/guide" })
    const reviewed = await submit(stack.client, "complete:fine", { workdir: "rev", profile: "review" })
    expect((await waitForEnd(stack.client, reviewed, ["succeeded"])).workdir_alias).toBe("rev")
  })

  it("the bridge stopped, a counting listener in its place: refusals are exact and make no RPC", async () => {
    await stack.bridge.kill("SIGTERM")
    expect(fs.existsSync(socketPath)).toBe(false)
    listener = net.createServer((socket) => {
      connections++
      socket.destroy()
    })
    const server = listener
    await new Promise<void>((resolve) => server.listen(socketPath, resolve))

    for (const [overrides, expected] of LOCAL_REFUSALS) {
      const refused = await fails(stack.client, "submit_agent_task", submitArgs(overrides))
      if (expected.includes(": ")) expect(refused.text, JSON.stringify(overrides)).toBe(expected)
      else expect(refused.code, JSON.stringify(overrides)).toBe(expected)
      expect(refused.text).not.toContain(stack.tree.base)
    }
    // Arguments the schema refuses never get further either.
    const badRuntime = await fails(stack.client, "submit_agent_task", submitArgs({ runtime: "gpt" }))
    expect(badRuntime.code).toBe("INVALID_ARGUMENT")
    expect(badRuntime.text).toContain("runtime")
    const badProfile = await fails(stack.client, "submit_agent_task", submitArgs({ profile: "admin" }))
    expect(badProfile.code).toBe("INVALID_ARGUMENT")
    expect(badProfile.text).toContain("profile")
    expect(connections).toBe(0)

    // A submission that passes every local check is the only one that reaches the socket.
    const valid = await fails(stack.client, "submit_agent_task", submitArgs({ path: "docs/./guide" }))
    expect(valid.text).toBe("AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable")
    expect(connections).toBe(1)
    const review = await fails(
      stack.client,
      "submit_agent_task",
      submitArgs({ workdir: "rev", profile: "review" })
    )
    expect(review.text).toBe("AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable")
    expect(connections).toBe(2)

    // The refusals are audited with their codes, and the normalized path is not invented for them.
    await auditArrived(stack, "submit_agent_task", (l) => l.workdir === "rev" && l.success === false)
    const lines = auditOf(stack, "submit_agent_task").filter((l) => l.success === false)
    expect(lines.map((l) => l.error_code)).toEqual(
      expect.arrayContaining([
        "WORKDIR_NOT_FOUND",
        "AGENT_DISABLED",
        "AGENT_RUNTIME_NOT_ALLOWED",
        "PATH_NOT_FOUND"
      ])
    )
  })

  it("with nothing listening, every agent tool that needs the bridge says so", async () => {
    listener?.close()
    listener = undefined
    fs.rmSync(socketPath, { force: true })
    const unavailable = "AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable"
    const taskId = "agt_000000000000000000000000"
    const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["submit_agent_task", submitArgs({})],
      ["list_agent_runtimes", {}],
      ["list_agent_models", { runtime: "fake" }],
      ["get_agent_task", { task_id: taskId }],
      ["read_agent_task_events", { task_id: taskId }],
      ["read_agent_task_result", { task_id: taskId }],
      ["respond_agent_approval", { task_id: taskId, request_id: "req_1", decision: "deny" }],
      ["answer_agent_question", { task_id: taskId, request_id: "req_1", answers: [{ question_id: "q1" }] }],
      ["send_agent_message", { task_id: taskId, message: "hello" }],
      ["cancel_agent_task", { task_id: taskId }]
    ]
    for (const [tool, args] of calls) {
      expect((await fails(stack.client, tool, args)).text, tool).toBe(unavailable)
    }
    // The filesystem plane is unaffected.
    expect((await ok(stack.client, "list_directory", { workdir: "main" })).entries).toBeDefined()
  })

  it("the bridge back, the same submission runs", async () => {
    await stack.bridge.restart()
    const id = await submit(stack.client, "complete:back", { path: "docs/./guide" })
    expect((await waitForEnd(stack.client, id, ["succeeded"])).final_response).toBe("back")
  })

  it("no host path in anything the client received", () => {
    expectNoHostPath(stack)
  })
})
