import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  type AgentStack,
  bundledClaudeBinary,
  type ClaudeSandbox,
  errorCodeOf,
  eventuallyAsync,
  type FakeMessagesServer,
  makeClaudeSandbox,
  NotReached,
  readAllEvents,
  startAgentStack,
  startFakeMessagesServer,
  type ToolCallResult,
  textOf,
  waitForStatus
} from "@serverfs/testkit"

/**
 * The Claude end-to-end stack: a fake Messages API on loopback, an isolated Claude home, and the
 * real serverfs-bridge + serverfs-mcp processes (testkit AgentStack) whose workdir `main`
 * allowlists only `claude`. The bridge passes its own environment — this isolated one — to the
 * real Claude Code CLI it starts.
 */
export interface ClaudeStack {
  readonly stack: AgentStack
  readonly server: FakeMessagesServer
  readonly sandbox: ClaudeSandbox
  readonly stop: () => Promise<void>
}

export const startClaudeStack = async (
  prefix: string,
  /** Further bridge settings (timeouts) for this stack. */
  extraEnv: Record<string, string> = {}
): Promise<ClaudeStack> => {
  const server = await startFakeMessagesServer()
  const sandbox = makeClaudeSandbox(server.url)
  try {
    const stack = await startAgentStack({
      prefix,
      env: () => ({
        ...sandbox.env,
        WORKDIR_01_AGENT_RUNTIMES: "claude",
        SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false",
        SERVERFS_CLAUDE_BIN: bundledClaudeBinary(),
        ...extraEnv
      })
    })
    return {
      stack,
      server,
      sandbox,
      stop: async () => {
        await stack.stop()
        await server.close()
        sandbox.remove()
      }
    }
  } catch (error) {
    await server.close()
    sandbox.remove()
    throw error
  }
}

export const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {}
): Promise<ToolCallResult> => (await client.callTool({ name, arguments: args })) as ToolCallResult

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

export const fails = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {}
): Promise<{ readonly code: string | undefined; readonly text: string }> => {
  const result = await call(client, name, args)
  const text = textOf(result)
  if (result.isError !== true) throw new Error(`${name} unexpectedly succeeded: ${text}`)
  return { code: errorCodeOf(text), text }
}

export const submitClaude = async (
  client: Client,
  prompt: string,
  extra: Record<string, unknown> = {}
): Promise<{ readonly taskId: string; readonly status: string }> => {
  const result = await ok(client, "submit_agent_task", {
    runtime: "claude",
    workdir: "main",
    prompt,
    ...extra
  })
  return { taskId: String(result.task_id), status: String(result.status) }
}

export const TERMINAL = ["succeeded", "failed", "cancelled", "interrupted"]

export const finished = (client: Client, taskId: string) => waitForStatus(client, taskId, TERMINAL, 60_000)

export const eventTypes = async (client: Client, taskId: string): Promise<ReadonlyArray<string>> =>
  (await readAllEvents(client, taskId)).map((e) => e.event_type)

/** Submit once the workdir lease of a previous task is released (it goes just after the task ends). */
export const submitWhenFree = async (
  client: Client,
  prompt: string,
  extra: Record<string, unknown> = {}
): Promise<{ readonly taskId: string; readonly status: string }> => {
  let busy = ""
  return eventuallyAsync(
    "the workdir lease released",
    async () => {
      const result = await call(client, "submit_agent_task", {
        runtime: "claude",
        workdir: "main",
        prompt,
        ...extra
      })
      if (result.isError !== true && result.structuredContent !== undefined) {
        return {
          taskId: String(result.structuredContent.task_id),
          status: String(result.structuredContent.status)
        }
      }
      const text = textOf(result)
      if (errorCodeOf(text) !== "WORKDIR_BUSY") throw new Error(`submit failed: ${text}`)
      busy = text
      return undefined
    },
    15_000
  ).catch((error: unknown) => {
    throw error instanceof NotReached ? new Error(`submit failed: ${busy}`) : error
  })
}
