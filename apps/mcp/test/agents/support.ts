import * as fs from "node:fs"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { flock, isWouldBlock, LOCK } from "@serverfs/posix"
import {
  type AgentStack,
  errorCodeOf,
  eventuallyAsync,
  readAllEvents,
  type ToolCallResult,
  textOf,
  waitForStatus
} from "@serverfs/testkit"
import { expect } from "vitest"

/**
 * Shared helpers of the agent-plane end-to-end suite: calls through a real MCP client, their
 * outcomes read the way a chat client reads them (structuredContent, or `CODE: message`).
 */
export const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {}
): Promise<ToolCallResult> => (await client.callTool({ name, arguments: args })) as ToolCallResult

/** The structured result of a call that must succeed. */
export const ok = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {}
): Promise<Record<string, unknown>> => {
  const result = await call(client, name, args)
  if (result.isError === true || result.structuredContent === undefined) {
    throw new Error(`${name} failed: ${textOf(result)}`)
  }
  // The text block is the same JSON (tool-contracts §0).
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent)
  return result.structuredContent
}

/** The `CODE: message` text of a call that must fail as a tool error. */
export const fails = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {}
): Promise<{ readonly code: string | undefined; readonly text: string }> => {
  const result = await call(client, name, args)
  const text = textOf(result)
  if (result.isError !== true) throw new Error(`${name} unexpectedly succeeded: ${text}`)
  expect(result.structuredContent).toBeUndefined()
  return { code: errorCodeOf(text), text }
}

export const submit = async (
  client: Client,
  prompt: string,
  extra: Record<string, unknown> = {}
): Promise<string> => {
  const result = await ok(client, "submit_agent_task", { runtime: "fake", workdir: "main", prompt, ...extra })
  expect(result.task_id).toMatch(/^agt_[0-9a-f]+$/)
  return result.task_id as string
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Repeat `attempt` until it returns a value (not undefined), bounded: for state a client cannot
 * observe directly (e.g. the lease released in the background after a task ended).
 */
export const eventually: <A>(
  what: string,
  attempt: () => Promise<A | undefined>,
  timeoutMs?: number
) => Promise<A> = eventuallyAsync

/** Cancel every task of `ids` that is not terminal yet (test cleanup). */
export const cancelAll = async (client: Client, ids: Iterable<string>): Promise<void> => {
  for (const id of ids) await call(client, "cancel_agent_task", { task_id: id })
}

/** Audit lines (tool_call) of the stack's MCP servers for one tool. */
export const auditOf = (stack: AgentStack, tool: string): ReadonlyArray<Record<string, unknown>> =>
  stack
    .mcpStderrLines()
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>]
      } catch {
        return []
      }
    })
    .filter((r) => r.event === "tool_call" && r.tool === tool)

/**
 * Wait (bounded) until a `tool` audit line satisfying `found` has arrived. The server writes a
 * call's audit line before answering, but on stderr, a separate pipe from the stdout answer: the
 * line can reach the test just after the response does.
 */
export const auditArrived = async (
  stack: AgentStack,
  tool: string,
  found: (line: Record<string, unknown>) => boolean
): Promise<void> => {
  // Bounded, not asserted: the caller's own expectation then reports what is missing.
  await eventuallyAsync(
    `a ${tool} audit line`,
    async () => auditOf(stack, tool).some(found) || undefined,
    5_000
  ).catch(() => undefined)
}

/** Host paths of the stack a client must never see: the temp base (and everything under it). */
export const expectNoHostPath = (stack: AgentStack): void => {
  const leaks = stack
    .received()
    .filter((text) => text.includes(stack.tree.base) || text.includes("/workdirs/"))
  expect(leaks).toEqual([])
}

/** None of `secrets` on either process's stderr. */
export const expectNotLogged = (stack: AgentStack, secrets: ReadonlyArray<string>): void => {
  const lines = [...stack.mcpStderrLines(), ...stack.bridge.stderrLines()]
  for (const secret of secrets) {
    expect(lines.filter((line) => line.includes(secret))).toEqual([])
  }
}

export const TERMINAL = ["succeeded", "failed", "cancelled", "interrupted"] as const

/**
 * Is the workdir's writer lease free right now? Probed with a non-blocking flock on the lock
 * file, released at once. A bridge releases a cancelled task's lease after its background
 * cleanup, which a client cannot observe; tests wait for it before the next workspace-write
 * submission.
 */
export const leaseFree = (stack: AgentStack, slot = 1): boolean => {
  const fd = fs.openSync(`${stack.env.SERVERFS_AGENT_LOCK_DIR}/${String(slot).padStart(2, "0")}.lock`, "r")
  try {
    flock(fd, LOCK.EX | LOCK.NB)
    flock(fd, LOCK.UN)
    return true
  } catch (error) {
    if (isWouldBlock(error)) return false
    throw error
  } finally {
    fs.closeSync(fd)
  }
}

export const awaitLeaseFree = (stack: AgentStack, slot = 1): Promise<true> =>
  eventually("the writer lease is released", async () => (leaseFree(stack, slot) ? true : undefined))

const TERMINAL_EVENTS = new Set(["task.completed", "task.failed", "task.cancelled", "task.interrupted"])

/**
 * Wait for one of the terminal `statuses` and for the task's terminal event. The bridge commits
 * the status and appends the event in two steps, so a client that reads the events right after
 * seeing the status may, in principle, be a moment early; a client follows the events to the
 * terminal one.
 */
export const waitForEnd = async (
  client: Client,
  taskId: string,
  statuses: ReadonlyArray<string> = TERMINAL,
  timeoutMs = 60_000
): Promise<Record<string, unknown>> => {
  const view = await waitForStatus(client, taskId, statuses, timeoutMs)
  await eventually(
    `the terminal event of ${taskId}`,
    async () =>
      (await readAllEvents(client, taskId)).some((e) => TERMINAL_EVENTS.has(e.event_type)) ? true : undefined,
    timeoutMs
  )
  return view
}
