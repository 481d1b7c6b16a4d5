import * as fs from "node:fs"
import {
  type AgentStack,
  eventuallyAsync,
  startAgentStack,
  type ToolCallResult,
  textOf
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { keys, operatorCli, submitScripted, waitStatus as waitCliStatus } from "./support.js"

/**
 * The operator CLI end to end (issue 10): the real `serverfs` binary (apps/cli/dist/bundle/serverfs.js)
 * against a real `serverfs-bridge` and a real `serverfs-mcp` over stdio. list/show/events/cancel
 * of scripted tasks; `--follow` until the end, and Ctrl-C ending it with 0; `leases`; `recover`
 * clearing the guard a SIGKILLed bridge left (the run claims to survive, so the restarted
 * bridge cannot prove it stopped) after which an MCP mutation succeeds; the exit codes (1 for a
 * bridge error, 3 with no bridge, the `bridge_unavailable` disposition); the --json key sets
 * pinned; and no prompt, result or correlation id in any output.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

let stack: AgentStack
const operator = operatorCli(() => stack)
const { spawn: spawnCli, collect, run: cli, json: cliJson } = operator

const tool = async (name: string, args: Record<string, unknown>) =>
  (await stack.client.callTool({ name, arguments: args })) as ToolCallResult

const submit = (prompt: string, profile: "review" | "workspace-write" = "review"): Promise<string> =>
  submitScripted(stack, prompt, { profile, correlation_id: "corr-SENTINEL-42" })

const waitStatus = (taskId: string, statuses: ReadonlyArray<string>) =>
  waitCliStatus(operator, taskId, statuses)

beforeAll(async () => {
  stack = await startAgentStack({ prefix: "serverfs-cli-ops-" })
})
afterAll(async () => {
  await stack?.stop()
  // Privacy: nothing the caller or the provider wrote reaches the operator's output.
  const all = operator.outputs().join("\n")
  expect(all).not.toContain("SENTINEL")
  expect(all).not.toContain(stack.tree.base)
})

describe("serverfs tasks", () => {
  let done = ""

  it("list, show and events of a finished scripted task, human and --json", async () => {
    done = await submit("say:hello SENTINEL-PROMPT\ncomplete:final SENTINEL-RESULT")
    await waitStatus(done, ["succeeded"])

    const list = await cli("tasks", "list")
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(/^TASK\s+STATUS\s+RUNTIME\s+WORKDIR\s+PROFILE\s+CREATED\s+ERROR$/m)
    expect(list.stdout).toMatch(new RegExp(`^${done}\\s+succeeded\\s+fake\\s+main\\s+review\\s`, "m"))

    const listed = await cliJson(
      "tasks",
      "list",
      "--status",
      "succeeded",
      "--workdir",
      "main",
      "--runtime",
      "fake",
      "--limit",
      "1"
    )
    expect(keys(listed)).toEqual(["tasks", "truncated"])
    const rows = listed.tasks as Array<Record<string, unknown>>
    expect(rows.map((t) => t.task_id)).toEqual([done])
    expect(keys(rows[0])).toEqual(
      [
        "completed_at",
        "created_at",
        "error_code",
        "pending_request_id",
        "profile",
        "runtime",
        "status",
        "task_id",
        "updated_at",
        "workdir_alias",
        "workdir_slot"
      ].sort()
    )

    const shown = await cliJson("tasks", "show", done)
    expect(keys(shown)).toEqual(
      [
        "completed_at",
        "created_at",
        "deadline_at",
        "error_code",
        "manifest",
        "pending_request",
        "profile",
        "result",
        "runtime",
        "started_at",
        "status",
        "task_id",
        "updated_at",
        "workdir_alias",
        "workdir_slot"
      ].sort()
    )
    expect(keys(shown.manifest)).toEqual(
      [
        "agent_mode",
        "bridge_version",
        "continue_from_task_id",
        "in_flight_recovery",
        "limits",
        "profile",
        "read_only",
        "runtime",
        "runtime_version",
        "workdir_alias",
        "workdir_slot"
      ].sort()
    )
    const human = await cli("tasks", "show", done)
    expect(human.stdout).toMatch(/^status:\s+succeeded$/m)
    expect(human.stdout).toMatch(/^workdir:\s+main \(slot 1\)$/m)

    const events = await cli("tasks", "events", done)
    expect(events.code).toBe(0)
    expect(events.stdout).toMatch(/^\s+#\s+TIME\s+EVENT\s+SUMMARY$/m)
    expect(events.stdout).toMatch(/task\.completed/)
    expect(events.stdout).toMatch(/agent\.message\s+text=\(\d+ chars\)/)
    const lines = (await cli("tasks", "events", done, "--json")).stdout.trim().split("\n")
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    for (const entry of entries)
      expect(keys(entry)).toEqual(["created_at", "event_id", "event_type", "summary"])
    expect(entries.map((e) => e.event_type)).toContain("task.completed")
    const later = (await cli("tasks", "events", done, "--after", String(entries[0]?.event_id), "--json"))
      .stdout
    expect(later.trim().split("\n")).toHaveLength(entries.length - 1)
  })

  it("events --follow prints each event once and ends with the task; Ctrl-C ends it with 0", async () => {
    const slow = await submit("say:one\nsleep:1500\nsay:two\ncomplete:end")
    const followed = await cli("tasks", "events", slow, "--follow", "--json")
    expect(followed.code).toBe(0)
    const ids = followed.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { event_id: number }).event_id)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(followed.stdout).toContain('"event_type":"task.completed"')

    const waiting = await submit("say:ready\nwait:")
    const child = spawnCli(["tasks", "events", waiting, "--follow"])
    const run = collect(child)
    await eventuallyAsync("the first event line", async () =>
      run.out().includes("agent.message") ? true : undefined
    )
    child.kill("SIGINT")
    expect((await run.done).code).toBe(0)

    const cancelled = await cliJson("tasks", "cancel", waiting)
    expect(cancelled).toEqual({ task_id: waiting, status: "cancelled" })
    expect((await cli("tasks", "cancel", waiting)).stdout).toBe(`${waiting}: cancelled\n`)
  })

  it("bridge errors: one stderr line and exit 1, or the JSON error object", async () => {
    const bad = await cli("tasks", "list", "--status", "bogus")
    expect(bad.code).toBe(1)
    expect(bad.stdout).toBe("")
    expect(bad.stderr).toMatch(/^serverfs: INVALID_REQUEST: .+\n$/)
    const badJson = await cli("tasks", "list", "--limit", "0", "--json")
    expect(badJson.code).toBe(1)
    expect(JSON.parse(badJson.stdout)).toEqual({
      error: { code: "INVALID_LIMIT", message: expect.any(String) }
    })
    const unknown = await cli("tasks", "show", "agt_000000000000000000000000")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^serverfs: AGENT_TASK_NOT_FOUND: /)
  })
})

describe("serverfs leases and recover", () => {
  it("a guard left by a SIGKILLed bridge blocks mutations until `serverfs recover` clears it", async () => {
    const survivor = await submit("survive:\nsay:ready\nwait:", "workspace-write")
    await waitStatus(survivor, ["running"])
    const held = await cliJson("leases")
    expect(keys(held)).toEqual(["workdirs"])
    const [main] = held.workdirs as Array<Record<string, unknown>>
    expect(keys(main)).toEqual(
      ["guard", "guard_task_id", "guard_task_status", "lease", "slot", "task_id", "workdir_alias"].sort()
    )
    expect(main).toMatchObject({
      slot: 1,
      lease: "held",
      task_id: survivor,
      guard: "valid",
      guard_task_id: survivor
    })
    const busy = await cli("recover", "main")
    expect(busy.code).toBe(1)
    expect(busy.stderr).toMatch(/^serverfs: WORKDIR_BUSY: /)

    await stack.bridge.kill("SIGKILL")
    const down = await cli("leases")
    expect(down.code).toBe(3)
    expect(down.stderr).toBe("serverfs: AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable\n")
    const diag = await cli("diagnostics", "task", survivor, "--json")
    expect(diag.code).toBe(3)
    expect(JSON.parse(diag.stdout)).toEqual({
      catalog_version: 1,
      disposition: "bridge_unavailable",
      task_id: survivor
    })
    expect((await cli("diagnostics", "snapshot")).code).toBe(3)

    // The restarted bridge interrupts the task but cannot prove the `survive:` run stopped.
    await stack.bridge.restart()
    const create = { workdir: "main", path: "after-recovery.txt", content: "ok\n" }
    const blocked = await tool("create_text_file", create)
    expect(blocked.isError).toBe(true)
    expect(textOf(blocked)).toMatch(/^WORKDIR_RECOVERY_REQUIRED: /)
    const guarded = await cli("leases")
    expect(guarded.stdout).toMatch(
      new RegExp(`^01\\s+main\\s+free\\s+-\\s+valid\\s+${survivor} \\(interrupted\\)$`, "m")
    )

    const refused = await cli("recover", "1")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^serverfs: WORKDIR_RECOVERY_REQUIRED: /)
    const forced = await cliJson("recover", "01", "--force")
    expect(forced).toEqual({
      slot: 1,
      workdir_alias: "main",
      outcome: "cleared",
      proof: "forced",
      task_id: survivor,
      task_status: "interrupted"
    })
    const created = await tool("create_text_file", create)
    expect(created.isError).not.toBe(true)
    expect(fs.readFileSync(`${stack.tree.root}/after-recovery.txt`, "utf8")).toBe("ok\n")
    expect((await cli("recover", "main")).stdout).toBe("slot 01 (main): no recovery guard; nothing to do\n")
    expect(stack.bridge.audit().some((r) => r.event === "guard_recovered" && r.proof === "forced")).toBe(true)
  })
})
