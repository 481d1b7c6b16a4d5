/**
 * Test support for the Codex adapter against the real `codex` binary: an in-memory TurnSink that
 * records what the adapter reports and lets a test play the human (answer, or let the bridge end
 * an interaction), per-test CODEX_HOME / workdir fixtures, and a guard that every process a test
 * started is gone.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type {
  AgentError,
  ApprovalPayload,
  ApprovalResolution,
  QuestionPayload,
  QuestionResolution
} from "@serverfs/domain"
import {
  type CodexHome,
  codexBin,
  eventuallyAsync,
  type FakeResponsesServer,
  makeCodexHome,
  processesMentioning
} from "@serverfs/testkit"
import { Deferred, Effect, Fiber, Queue } from "effect"
import {
  type CodexAdapterOptions,
  InteractionEnded,
  type ProviderAdapter,
  type TurnOutcome,
  type TurnRequest,
  type TurnSink
} from "../../src/index.js"

export interface Pending<P, R> {
  readonly payload: P
  /** The human's answer. */
  readonly answer: (resolution: R) => Effect.Effect<void>
  /** The bridge ends the interaction (cancelled, expired, staled by a terminal move). */
  readonly end: (reason: InteractionEnded["reason"]) => Effect.Effect<void>
  /** "pending" until answered; "withdrawn" when the adapter interrupted it (provider withdrew it). */
  readonly state: () => "pending" | "answered" | "ended" | "withdrawn"
}

export interface RecordedEvent {
  readonly type: string
  readonly payload: Record<string, unknown>
}

export interface TestSink {
  readonly sink: TurnSink
  readonly events: Array<RecordedEvent>
  readonly ids: { sessionId?: string; turnId?: string }
  readonly nextApproval: Effect.Effect<Pending<ApprovalPayload, ApprovalResolution>>
  readonly nextQuestion: Effect.Effect<Pending<QuestionPayload, QuestionResolution>>
  readonly approvalCount: () => number
  readonly questionCount: () => number
  readonly eventTypes: () => ReadonlyArray<string>
  /** Waits (bounded) until an event of `type` was reported. */
  readonly waitForEvent: (type: string) => Effect.Effect<RecordedEvent>
}

const WAIT = "45 seconds"

const pendingOf = <P, R>(
  payload: P,
  deferred: Deferred.Deferred<R, InteractionEnded>,
  status: { value: "pending" | "answered" | "ended" | "withdrawn" }
): Pending<P, R> => ({
  payload,
  answer: (resolution) =>
    Effect.zipRight(
      Effect.sync(() => {
        status.value = "answered"
      }),
      Deferred.succeed(deferred, resolution)
    ).pipe(Effect.asVoid),
  end: (reason) =>
    Effect.zipRight(
      Effect.sync(() => {
        status.value = "ended"
      }),
      Deferred.fail(deferred, new InteractionEnded({ reason }))
    ).pipe(Effect.asVoid),
  state: () => status.value
})

export const makeTestSink: Effect.Effect<TestSink> = Effect.gen(function* () {
  const approvals = yield* Queue.unbounded<Pending<ApprovalPayload, ApprovalResolution>>()
  const questions = yield* Queue.unbounded<Pending<QuestionPayload, QuestionResolution>>()
  const events: Array<RecordedEvent> = []
  const ids: { sessionId?: string; turnId?: string } = {}
  let approvalCount = 0
  let questionCount = 0

  const interact = <P, R>(queue: Queue.Queue<Pending<P, R>>, payload: P) =>
    Effect.gen(function* () {
      const deferred = yield* Deferred.make<R, InteractionEnded>()
      const status: { value: "pending" | "answered" | "ended" | "withdrawn" } = { value: "pending" }
      yield* Queue.offer(queue, pendingOf(payload, deferred, status))
      return yield* Deferred.await(deferred).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            status.value = "withdrawn"
          })
        )
      )
    })

  const sink: TurnSink = {
    event: (type, payload) => Effect.sync(() => void events.push({ type, payload })),
    nativeIds: (next) =>
      Effect.sync(() => {
        if (next.sessionId !== undefined) ids.sessionId = next.sessionId
        if (next.turnId !== undefined) ids.turnId = next.turnId
      }),
    requestApproval: (payload) =>
      Effect.suspend(() => {
        approvalCount++
        return interact(approvals, payload)
      }),
    requestQuestion: (payload) =>
      Effect.suspend(() => {
        questionCount++
        return interact(questions, payload)
      })
  }

  const waitForEvent = (type: string) =>
    Effect.gen(function* () {
      for (;;) {
        const found = events.find((e) => e.type === type)
        if (found !== undefined) return found
        yield* Effect.sleep("20 millis")
      }
    }).pipe(
      Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`no ${type} event`) }),
      Effect.orDie
    )

  return {
    sink,
    events,
    ids,
    nextApproval: Queue.take(approvals).pipe(
      Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error("no approval request") }),
      Effect.orDie
    ),
    nextQuestion: Queue.take(questions).pipe(
      Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error("no question") }),
      Effect.orDie
    ),
    approvalCount: () => approvalCount,
    questionCount: () => questionCount,
    eventTypes: () => events.map((e) => e.type),
    waitForEvent
  }
})

// ---- fixtures ---------------------------------------------------------------------------------
export interface Fixture {
  readonly base: string
  readonly workdir: string
  /** A directory outside the workdir (and, by the test config, outside Codex's writable roots). */
  readonly outside: string
  readonly home: CodexHome
  readonly request: (taskId: string, prompt: string, extra?: Partial<TurnRequest>) => TurnRequest
  readonly options: (extra?: Partial<CodexAdapterOptions>) => CodexAdapterOptions
  readonly remove: () => void
}

export const makeFixture = (
  server: FakeResponsesServer,
  transport: "daemon" | "stdio",
  features: Readonly<Record<string, boolean>> = {}
): Fixture => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `sfcx-${transport}-`))
  const workdir = path.join(base, "workdir")
  const outside = path.join(base, "outside")
  fs.mkdirSync(path.join(workdir, "sub"), { recursive: true })
  fs.mkdirSync(outside)
  const home = makeCodexHome({ baseUrl: server.baseUrl, parent: base, features })
  return {
    base,
    workdir,
    outside,
    home,
    request: (taskId, prompt, extra = {}) => ({
      taskId,
      cwd: workdir,
      workdirRoot: workdir,
      prompt,
      profile: "workspace-write",
      model: null,
      resume: null,
      ...extra
    }),
    options: (extra = {}) => ({
      bin: codexBin,
      codexHome: home.path,
      transport,
      autostart: false,
      requestTimeoutSeconds: 30,
      ...extra
    }),
    remove: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

/** Fails when a process started for `needle` (a CODEX_HOME) is still alive (bounded wait). */
export const expectNoProcessesFor = (needle: string): Promise<void> =>
  eventuallyAsync(
    `no processes left running for ${needle}`,
    () => (processesMentioning(needle).length === 0 ? true : undefined),
    10_000,
    100
  ).then(
    () => undefined,
    () => {
      throw new Error(`processes left running for ${needle}: ${processesMentioning(needle).join(", ")}`)
    }
  )

// ---- running turns ----------------------------------------------------------------------------
export interface RunningTurn {
  readonly fiber: Fiber.RuntimeFiber<TurnOutcome, AgentError>
  /** The outcome, bounded. */
  readonly outcome: Effect.Effect<TurnOutcome, AgentError>
  /** The error the turn fails with (a success fails the test). */
  readonly failure: Effect.Effect<AgentError>
}

export const startTurn = (adapter: ProviderAdapter, request: TurnRequest, sink: TurnSink) =>
  Effect.map(Effect.fork(adapter.run(request, sink)), (fiber): RunningTurn => {
    const joined = Fiber.join(fiber).pipe(
      Effect.timeout("60 seconds"),
      Effect.catchTag("TimeoutException", () => Effect.dieMessage("the turn did not end"))
    )
    return {
      fiber,
      outcome: joined,
      failure: Effect.flip(joined).pipe(
        Effect.catchAll(() => Effect.dieMessage("the turn succeeded but was expected to fail"))
      )
    }
  })
