import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { errorCodeOf, type ToolCallResult, textOf } from "@serverfs/testkit"

/**
 * Issue 15 item 3's one timing bound: once a task's terminal state is visible (or the bridge has
 * exited), a mutation of its workdir through MCP succeeds within one second. WORKDIR_BUSY is
 * retried until that second has passed (an attempt begun within it that succeeds counts: the
 * MCP call's own latency is not the lease's); any other refusal (a recovery guard left behind)
 * fails at once — the workdir must be free, not merely unlocked. Returns how long it took (ms).
 */
export const RELEASE_BOUND_MS = 1000

export const mutatesWithinBound = async (client: Client, file: string): Promise<number> => {
  const started = performance.now()
  for (;;) {
    const result = (await client.callTool({
      name: "create_text_file",
      arguments: { workdir: "main", path: file, content: "after the task\n" }
    })) as ToolCallResult
    const elapsed = performance.now() - started
    if (result.isError !== true) return elapsed
    const text = textOf(result)
    if (errorCodeOf(text) !== "WORKDIR_BUSY") throw new Error(`the mutation was refused: ${text}`)
    if (elapsed > RELEASE_BOUND_MS) {
      throw new Error(`the workdir was still busy ${Math.round(elapsed)} ms after the task ended: ${text}`)
    }
    await new Promise<void>((resolve) => setTimeout(resolve, 20))
  }
}
