import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  type AgentStack,
  type CodexHome,
  codexBin,
  errorCodeOf,
  eventuallyAsync,
  type FakeResponsesServer,
  processesMentioning,
  type ToolCallResult,
  textOf,
  waitForStatus
} from "@serverfs/testkit"
import { expect } from "vitest"

/**
 * Helpers of the Codex end-to-end suite: tool calls through a real MCP SDK client, read the way
 * a chat client reads them (structuredContent, or `CODE: message`).
 */
export const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as ToolCallResult

export const ok = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {}
): Promise<Record<string, unknown>> => {
  const result = await call(client, name, args)
  if (result.isError === true || result.structuredContent === undefined) {
    throw new Error(`${name} failed: ${textOf(result)}`)
  }
  return result.structuredContent
}

export const fails = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const result = await call(client, name, args)
  const text = textOf(result)
  if (result.isError !== true) throw new Error(`${name} unexpectedly succeeded: ${text}`)
  return { code: errorCodeOf(text), text }
}

export const submitCodex = async (
  client: Client,
  prompt: string,
  extra: Record<string, unknown> = {}
): Promise<string> => {
  const result = await ok(client, "submit_agent_task", {
    runtime: "codex",
    workdir: "main",
    profile: "workspace-write",
    prompt,
    ...extra
  })
  return result.task_id as string
}

export interface PendingView {
  readonly request_id: string
  readonly kind: string
  readonly status: string
  readonly payload: Record<string, unknown>
}

/** Wait until the task waits for the human; its pending request. */
export const pendingOf = async (client: Client, taskId: string): Promise<PendingView> => {
  const task = await waitForStatus(client, taskId, ["waiting_for_approval", "waiting_for_question"], 60_000)
  const pending = task.pending_request as PendingView | undefined
  if (pending === undefined) throw new Error("a waiting task without its pending request")
  return pending
}

export const finished = (client: Client, taskId: string) =>
  waitForStatus(client, taskId, ["succeeded", "failed", "cancelled", "interrupted"], 60_000)

export const expectStatus = async (client: Client, taskId: string, status: string) => {
  const task = await finished(client, taskId)
  expect({ status: task.status, error: task.error_code, message: task.error_message }).toMatchObject({
    status
  })
  return task
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Repeat `attempt` until it returns a value, bounded (the testkit's one `eventually`). */
export const eventually: <A>(
  what: string,
  attempt: () => Promise<A | undefined>,
  timeoutMs?: number
) => Promise<A> = eventuallyAsync

/** What every Codex end-to-end stack sets: the real codex with its own home, the only runtime. */
export const codexStackEnv = (home: CodexHome, transport: "stdio" | "daemon") => ({
  WORKDIR_01_AGENT_RUNTIMES: "codex",
  SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false",
  SERVERFS_CODEX_BIN: codexBin,
  SERVERFS_CODEX_HOME: home.path,
  SERVERFS_CODEX_TRANSPORT: transport,
  SERVERFS_CODEX_REQUEST_TIMEOUT_SECONDS: "30"
})

/** After a stdio-transport stack: it stops, no codex child may be left, then its home and the fake server go. */
export const stopStdioStack = async (
  stack: AgentStack | undefined,
  home: CodexHome | undefined,
  server: FakeResponsesServer | undefined
): Promise<void> => {
  await stack?.stop()
  if (home !== undefined) {
    await eventually("no codex child left", async () =>
      processesMentioning(home.path).length === 0 ? true : undefined
    )
    home.remove()
  }
  await server?.close()
}
