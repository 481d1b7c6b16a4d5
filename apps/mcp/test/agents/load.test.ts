import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  type AgentEvent,
  type AgentStack,
  readAllEvents,
  startAgentStack,
  type ToolCallResult,
  textOf
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { call, expectNoHostPath, ok, sleep, submit } from "./support.js"

/**
 * Load: four task slots keep a streaming task running for about a minute — as soon as a slot's
 * task ends, the next one is submitted, until the minute is over — while 50 concurrent pollers
 * page through the events with cursors. Every poller is MCP-level: 5 serverfs-mcp processes (the
 * stack's and 4 more, each with its own MCP SDK client) carry 10 pollers each, and every poll
 * goes client → serverfs-mcp → a new UDS connection → serverfs-bridge. A poller follows one
 * slot: it reads a task until its terminal event and then an empty page, then moves to the
 * slot's next task. Afterwards: no call failed, every task succeeded, and for every task each
 * poller's concatenated pages equal the task's final full event list (gap-free, duplicate-free,
 * ascending). The minute is a workload bound, never an assertion: a slow machine just runs
 * fewer, slower tasks.
 */

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 })

const SLOTS = 4
const MCP_PROCESSES = 5
const POLLERS_PER_PROCESS = 10
const STREAM_MS = 60_000
const ROUNDS = 12
const EVENTS_PER_ROUND = 10
const ROUND_SLEEP_MS = 250
const PAGE_SIZES = [20, 50, 100, 250, 500] as const
const TERMINAL_EVENTS = new Set(["task.completed", "task.failed", "task.cancelled", "task.interrupted"])

let stack: AgentStack
const clients: Client[] = []

beforeAll(async () => {
  stack = await startAgentStack({ prefix: "serverfs-agent-load-" })
  clients.push(stack.client)
  const more = await Promise.all(Array.from({ length: MCP_PROCESSES - 1 }, () => stack.startMcp()))
  clients.push(...more.map((m) => m.client))
})

afterAll(async () => {
  await stack?.stop()
})

/** A short script: bursts of events with sleeps between, then a result naming the task. */
const streamingScript = (name: string): string =>
  [
    ...Array.from({ length: ROUNDS }, () => `events:${EVENTS_PER_ROUND}\nsleep:${ROUND_SLEEP_MS}`),
    `complete:${name}`
  ].join("\n")

/** A slot's chain of tasks, one after the other; `closed` once no further task will come. */
interface Slot {
  readonly tasks: Array<{ readonly id: string; readonly name: string }>
  closed: boolean
}

/** Keep the slot busy until the streaming window is over: submit, wait for the end, repeat. */
const driveSlot = async (slot: Slot, index: number, until: number): Promise<void> => {
  try {
    for (let n = 0; Date.now() < until; n++) {
      const name = `load-${index}-${n}`
      const id = await submit(stack.client, streamingScript(name), {
        profile: "review",
        correlation_id: name
      })
      slot.tasks.push({ id, name })
      for (;;) {
        const view = await ok(stack.client, "get_agent_task", { task_id: id })
        if (["succeeded", "failed", "cancelled", "interrupted"].includes(view.status as string)) break
        await sleep(500)
      }
    }
  } finally {
    slot.closed = true
  }
}

interface PollerOutcome {
  readonly pageSize: number
  readonly byTask: Map<string, AgentEvent[]>
  readonly polls: number
  readonly errors: ReadonlyArray<string>
}

/** Read one task's events from the start to its terminal event and then an empty page. */
const pollTask = async (
  client: Client,
  taskId: string,
  pageSize: number,
  pace: () => number,
  into: AgentEvent[],
  errors: string[]
): Promise<number> => {
  let cursor = 0
  let polls = 0
  let sawTerminal = false
  for (;;) {
    polls++
    const result: ToolCallResult = await call(client, "read_agent_task_events", {
      task_id: taskId,
      after_event_id: cursor,
      limit: pageSize
    }).catch((error: unknown) => ({ isError: true, content: [{ type: "text", text: String(error) }] }))
    if (result.isError === true || result.structuredContent === undefined) {
      errors.push(textOf(result))
      if (errors.length > 20) return polls
      await sleep(pace())
      continue
    }
    const page = result.structuredContent as {
      events: ReadonlyArray<AgentEvent>
      next_after_event_id: number
    }
    const last = page.events.at(-1)
    if (page.next_after_event_id !== (last === undefined ? cursor : last.event_id)) {
      errors.push(`cursor ${page.next_after_event_id} after ${cursor} with ${page.events.length} events`)
    }
    into.push(...page.events)
    cursor = page.next_after_event_id
    if (page.events.some((e) => TERMINAL_EVENTS.has(e.event_type))) sawTerminal = true
    if (sawTerminal && page.events.length === 0) return polls
    // A full page means more is waiting: read on at once. Otherwise pace.
    if (page.events.length < pageSize) {
      if (polls % 10 === 0) {
        const view = await call(client, "get_agent_task", { task_id: taskId })
        if (view.isError === true) errors.push(textOf(view))
      }
      await sleep(pace())
    }
  }
}

const poller = async (client: Client, slot: Slot, pageSize: number, seed: number): Promise<PollerOutcome> => {
  const byTask = new Map<string, AgentEvent[]>()
  const errors: string[] = []
  let polls = 0
  let random = seed
  const pace = () => {
    random = (Math.imul(random, 1664525) + 1013904223) >>> 0
    return 200 + (random % 300)
  }
  for (let next = 0; ; next++) {
    // Wait for the slot's next task, or for the slot to close.
    while (slot.tasks.length <= next && !slot.closed) await sleep(100)
    const task = slot.tasks[next]
    if (task === undefined) break
    const events: AgentEvent[] = []
    byTask.set(task.id, events)
    polls += await pollTask(client, task.id, pageSize, pace, events, errors)
    if (errors.length > 20) break
  }
  return { pageSize, byTask, polls, errors }
}

describe("load", () => {
  it("4 task slots streaming for about a minute, 50 MCP-level pollers: no error, no lost or repeated event", async () => {
    const started = Date.now()
    const slots: Slot[] = Array.from({ length: SLOTS }, () => ({ tasks: [], closed: false }))
    const drivers = slots.map((slot, i) => driveSlot(slot, i, started + STREAM_MS))
    const pollers: Array<Promise<PollerOutcome>> = []
    for (let p = 0; p < MCP_PROCESSES * POLLERS_PER_PROCESS; p++) {
      const client = clients[p % MCP_PROCESSES] as Client
      const slot = slots[p % SLOTS] as Slot
      pollers.push(poller(client, slot, PAGE_SIZES[p % PAGE_SIZES.length] ?? 100, p + 1))
    }
    await Promise.all(drivers)
    const outcomes = await Promise.all(pollers)
    const duration = Date.now() - started

    expect(outcomes.flatMap((o) => o.errors)).toEqual([])
    const finals = new Map<string, ReadonlyArray<AgentEvent>>()
    for (const slot of slots) {
      expect(slot.tasks.length).toBeGreaterThan(0)
      for (const task of slot.tasks) {
        const view = await ok(stack.client, "get_agent_task", { task_id: task.id })
        expect(view, task.name).toMatchObject({
          status: "succeeded",
          final_response: task.name,
          correlation_id: task.name
        })
        const full = await readAllEvents(stack.client, task.id)
        expect(full.filter((e) => e.event_type === "agent.message")).toHaveLength(ROUNDS * EVENTS_PER_ROUND)
        expect(full.at(-1)?.event_type).toBe("task.completed")
        finals.set(task.id, full)
      }
    }
    for (const [p, outcome] of outcomes.entries()) {
      // Every poller followed every task of its slot, start to end.
      expect([...outcome.byTask.keys()], `poller ${p}`).toEqual(slots[p % SLOTS]?.tasks.map((t) => t.id))
      for (const [taskId, events] of outcome.byTask) {
        const ids = events.map((e) => e.event_id)
        for (let i = 1; i < ids.length; i++) {
          expect(ids[i], `poller ${p}`).toBeGreaterThan(ids[i - 1] ?? Number.POSITIVE_INFINITY)
        }
        expect(new Set(ids).size).toBe(ids.length)
        expect(events, `poller ${p}, ${taskId}`).toEqual(finals.get(taskId))
      }
    }
    expectNoHostPath(stack)

    const tasks = finals.size
    const events = [...finals.values()].reduce((n, list) => n + list.length, 0)
    const polls = outcomes.reduce((n, o) => n + o.polls, 0)
    console.log(
      `load: ${tasks} tasks in ${SLOTS} slots, ${events} events, ${outcomes.length} pollers on ${MCP_PROCESSES} MCP processes, ${polls} event polls, ${duration} ms`
    )
  })
})
