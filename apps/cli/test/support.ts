import { spawn } from "node:child_process"
import { type AgentStack, cliMain, eventuallyAsync, type ToolCallResult, textOf } from "@serverfs/testkit"
import { Schema } from "effect"

/**
 * What the CLI's end-to-end tests share (operator.test.ts, observe.test.ts): the real `serverfs`
 * binary (apps/cli/dist/bundle/serverfs.js) run with a stack's environment, every output kept for the
 * privacy checks; scripted-task submission over the stack's MCP client; waiting on a status
 * through the CLI itself.
 */
export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const JsonObject = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
/** A `--json` document: decoded at the boundary, not cast. */
export const parseJsonObject = Schema.decodeUnknownSync(JsonObject)

export interface OperatorCli {
  /** `serverfs args…` started with the stack's environment (PATH aside, nothing inherited). */
  readonly spawn: (args: ReadonlyArray<string>) => CliChild
  /** Collect a started child's output; `out` is its stdout so far. */
  readonly collect: (child: CliChild) => { readonly done: Promise<Run>; readonly out: () => string }
  /** Run to the end. */
  readonly run: (...args: ReadonlyArray<string>) => Promise<Run>
  /** Run with `--json`, expect exit 0, decode the one document. */
  readonly json: (...args: ReadonlyArray<string>) => Promise<Record<string, unknown>>
  /** stdout and stderr of every finished run so far. */
  readonly outputs: () => ReadonlyArray<string>
}

const spawnWith = (env: Readonly<Record<string, string>>, args: ReadonlyArray<string>) =>
  spawn(process.execPath, [cliMain, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
export type CliChild = ReturnType<typeof spawnWith>

/** The CLI of `stack()` (a thunk: the stack is started in a beforeAll). */
export const operatorCli = (stack: () => AgentStack): OperatorCli => {
  const outputs: Array<string> = []
  const collect = (child: CliChild) => {
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8")
    })
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8")
    })
    const done = new Promise<Run>((resolve) =>
      child.once("exit", (code) => {
        outputs.push(stdout, stderr)
        resolve({ code, stdout, stderr })
      })
    )
    return { done, out: () => stdout }
  }
  const spawnCli = (args: ReadonlyArray<string>) => spawnWith(stack().env, args)
  const run = (...args: ReadonlyArray<string>) => collect(spawnCli(args)).done
  const json = async (...args: ReadonlyArray<string>) => {
    const result = await run(...args, "--json")
    if (result.code !== 0)
      throw new Error(`serverfs ${args.join(" ")} exited ${result.code}: ${result.stdout}${result.stderr}`)
    return parseJsonObject(result.stdout)
  }
  return { spawn: spawnCli, collect, run, json, outputs: () => [...outputs] }
}

/** submit_agent_task's optional fields, as a caller sends them. */
export interface SubmitOptions {
  readonly profile?: "review" | "workspace-write"
  readonly path?: string
  readonly model?: string
  readonly correlation_id?: string
  readonly idempotency_key?: string
}

/** A scripted (`fake`) task in the stack's workdir `main`; its id. */
export const submitScripted = async (
  stack: AgentStack,
  prompt: string,
  options: SubmitOptions = {}
): Promise<string> => {
  const result = (await stack.client.callTool({
    name: "submit_agent_task",
    arguments: { runtime: "fake", workdir: "main", prompt, profile: "review", ...options }
  })) as ToolCallResult
  if (result.isError === true) throw new Error(textOf(result))
  const taskId = result.structuredContent?.task_id
  if (typeof taskId !== "string") throw new Error(`submit_agent_task gave no task id: ${textOf(result)}`)
  return taskId
}

/** Until `serverfs tasks show` reports one of `statuses`; that status. */
export const waitStatus = (cli: OperatorCli, taskId: string, statuses: ReadonlyArray<string>) =>
  eventuallyAsync(`${taskId} ${statuses.join("|")}`, async () => {
    const status = String((await cli.json("tasks", "show", taskId)).status)
    return statuses.includes(status) ? status : undefined
  })

/** An object's keys, sorted: what the tests pin a --json key set with. */
export const keys = (value: unknown): ReadonlyArray<string> =>
  value !== null && typeof value === "object" ? Object.keys(value).sort() : []
