/**
 * Test support for the Claude adapter: the real Claude Code binary shipped with the Agent SDK,
 * offline against the loopback FakeMessagesServer, in an isolated HOME/CLAUDE_CONFIG_DIR/TMPDIR.
 * A recording TurnSink stands in for the bridge (the bridge itself is exercised in restart.test.ts
 * and the MCP end-to-end tests).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type {
  AgentError,
  ApprovalPayload,
  ApprovalResolution,
  QuestionPayload,
  QuestionResolution
} from "@serverfs/domain"
import {
  bundledClaudeBinary,
  type ClaudeSandbox,
  eventuallyAsync,
  type FakeMessagesServer,
  makeClaudeSandbox,
  startFakeMessagesServer
} from "@serverfs/testkit"
import { Effect, Either, Exit, Scope } from "effect"
import {
  InteractionEnded,
  makeClaudeAdapter,
  type ProviderAdapter,
  type TurnRequest,
  type TurnSink
} from "../../src/index.js"

export interface RecordedEvent {
  readonly type: string
  readonly payload: Record<string, unknown>
}

export interface Recording {
  readonly sink: TurnSink
  readonly events: Array<RecordedEvent>
  readonly ids: { sessionId?: string; turnId?: string }
  readonly approvals: Array<ApprovalPayload>
  readonly questions: Array<QuestionPayload>
  /** How many relayed interactions were interrupted (Claude withdrew them). */
  readonly withdrawn: { count: number }
}

export interface Handlers {
  readonly approval?: (payload: ApprovalPayload) => Effect.Effect<ApprovalResolution, InteractionEnded>
  readonly question?: (payload: QuestionPayload) => Effect.Effect<QuestionResolution, InteractionEnded>
}

export const decision = (d: ApprovalResolution["decision"]): ApprovalResolution => ({
  decision: d,
  granted_permission_ids: []
})

export const makeRecording = (handlers: Handlers = {}): Recording => {
  const events: Array<RecordedEvent> = []
  const ids: { sessionId?: string; turnId?: string } = {}
  const approvals: Array<ApprovalPayload> = []
  const questions: Array<QuestionPayload> = []
  const withdrawn = { count: 0 }
  const counted = <A>(effect: Effect.Effect<A, InteractionEnded>) =>
    effect.pipe(Effect.onInterrupt(() => Effect.sync(() => (withdrawn.count += 1))))
  const sink: TurnSink = {
    event: (type, payload) => Effect.sync(() => void events.push({ type, payload })),
    nativeIds: (next) => Effect.sync(() => void Object.assign(ids, next)),
    requestApproval: (payload) =>
      Effect.suspend(() => {
        approvals.push(payload)
        return counted(
          handlers.approval?.(payload) ?? Effect.fail(new InteractionEnded({ reason: "cancelled" }))
        )
      }),
    requestQuestion: (payload) =>
      Effect.suspend(() => {
        questions.push(payload)
        return counted(
          handlers.question?.(payload) ?? Effect.fail(new InteractionEnded({ reason: "cancelled" }))
        )
      })
  }
  return { sink, events, ids, approvals, questions, withdrawn }
}

export interface ClaudeFixture {
  readonly server: FakeMessagesServer
  readonly sandbox: ClaudeSandbox
  readonly workspace: string
  readonly adapter: ProviderAdapter
  readonly request: (prompt: string, overrides?: Partial<TurnRequest>) => TurnRequest
  readonly close: () => Promise<void>
}

let taskCounter = 0

/** One fake API server, one isolated Claude home and workspace, one adapter on the real CLI. */
export const startClaudeFixture = async (): Promise<ClaudeFixture> => {
  const server = await startFakeMessagesServer()
  const sandbox = makeClaudeSandbox(server.url)
  const workspace = path.join(sandbox.base, "workspace")
  fs.mkdirSync(workspace)
  const scope = Effect.runSync(Scope.make())
  const adapter = await Effect.runPromise(
    Scope.extend(
      makeClaudeAdapter({
        claudeBin: bundledClaudeBinary(),
        useBundledCli: false,
        probeTimeoutSeconds: 10,
        environment: sandbox.env
      }),
      scope
    )
  )
  return {
    server,
    sandbox,
    workspace,
    adapter,
    request: (prompt, overrides = {}) => {
      taskCounter += 1
      return {
        taskId: `agt_claude_${process.pid}_${taskCounter}`,
        cwd: workspace,
        workdirRoot: workspace,
        prompt,
        profile: "workspace-write",
        model: null,
        resume: null,
        ...overrides
      }
    },
    close: async () => {
      await Effect.runPromise(adapter.close())
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await waitForNoProcessesIn(sandbox.base)
      await server.close()
      sandbox.remove()
    }
  }
}

export const runTurn = (adapter: ProviderAdapter, request: TurnRequest, recording: Recording) =>
  Effect.runPromise(Effect.either(adapter.run(request, recording.sink)))

export const expectSuccess = (outcome: Either.Either<{ readonly finalText: string }, AgentError>): string => {
  if (Either.isLeft(outcome))
    throw new Error(`the turn failed: ${outcome.left._tag}: ${outcome.left.message}`)
  return outcome.right.finalText
}

export const expectFailure = (
  outcome: Either.Either<{ readonly finalText: string }, AgentError>
): AgentError => {
  if (Either.isRight(outcome)) throw new Error(`the turn succeeded: ${outcome.right.finalText}`)
  return outcome.left
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const waitUntil = <A>(what: string, probe: () => A | undefined, timeoutMs = 30_000): Promise<A> =>
  eventuallyAsync(what, probe, timeoutMs)

/** Pids of processes whose cwd is inside `dir` (the CLI and the commands its tools run). */
export const processesIn = (dir: string): Array<number> => {
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`)
      if (cwd === dir || cwd.startsWith(`${dir}/`)) out.push(Number(entry))
    } catch {
      // gone, or not ours to read
    }
  }
  return out
}

/** Pids whose command line contains `needle`. */
export const processesMatching = (needle: string): Array<number> => {
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")
      if (cmdline.includes(needle)) out.push(Number(entry))
    } catch {
      // gone
    }
  }
  return out
}

/** Every process started under `dir` must be gone (bounded); fails with the survivors' pids. */
export const waitForNoProcessesIn = (dir: string, timeoutMs = 15_000): Promise<void> =>
  eventuallyAsync(
    `no processes left running in ${dir}`,
    () => (processesIn(dir).length === 0 ? true : undefined),
    timeoutMs,
    50
  ).then(
    () => undefined,
    () => {
      throw new Error(`processes left running in ${dir}: ${processesIn(dir).join(", ")}`)
    }
  )
