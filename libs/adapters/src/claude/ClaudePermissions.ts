import * as path from "node:path"
import type { CanUseTool, PermissionResult } from "@anthropic-ai/claude-agent-sdk"
import { Effect, Exit, type Fiber } from "effect"
import type { InteractionEnded, TurnRequest, TurnSink } from "../ProviderAdapter.js"
import { type CurrentFile, readCurrentFile } from "./ClaudeCurrentFile.js"
import { filePathOf } from "./ClaudeFileChanges.js"
import {
  answersFor,
  approvalPayload,
  CANCEL_MESSAGE,
  permissionResult,
  questionPayload,
  sessionGrant
} from "./ClaudeMapping.js"

/**
 * Claude Code's `canUseTool` (spec v0.3 §15, §18): only what reaches Claude's ask path comes to
 * ServerFS — approvals and AskUserQuestion — relayed durably through the sink. Each callback is
 * a fiber of the turn's set (interrupted when the turn stops); Claude aborting a callback
 * (interrupt, end of turn) interrupts it, which makes the pending ServerFS request stale.
 */
const deny = (message: string, interrupt = false): PermissionResult =>
  interrupt ? { behavior: "deny", message, interrupt: true } : { behavior: "deny", message }

type AskContext = Parameters<CanUseTool>[2]

const relay = (request: TurnRequest, sink: TurnSink) => {
  const approval = (
    tool: string,
    input: Record<string, unknown>,
    context: AskContext
  ): Effect.Effect<PermissionResult, InteractionEnded> =>
    Effect.suspend(() => {
      const grant = sessionGrant(context)
      // What a Write would replace, read only through the workdir-safe path (for its diff).
      const file = filePathOf(input)
      const current: CurrentFile =
        tool === "Write" && file !== undefined
          ? readCurrentFile(request.workdirRoot, path.resolve(request.cwd, file))
          : { _tag: "unknown" }
      const payload = approvalPayload(tool, input, context, request, grant.length > 0, current)
      return Effect.map(sink.requestApproval(payload), (resolution) =>
        permissionResult(input, resolution, grant)
      )
    })

  const question = (input: Record<string, unknown>): Effect.Effect<PermissionResult, InteractionEnded> =>
    Effect.suspend(() => {
      const parsed = questionPayload(input)
      if (typeof parsed === "string") {
        return Effect.succeed(deny(`ServerFS cannot relay this question (${parsed}).`))
      }
      return Effect.map(
        sink.requestQuestion(parsed.payload),
        (resolution): PermissionResult => ({
          behavior: "allow",
          updatedInput: { ...input, answers: answersFor(parsed.questions, resolution) }
        })
      )
    })

  return (
    tool: string,
    input: Record<string, unknown>,
    context: AskContext
  ): Effect.Effect<PermissionResult> =>
    (tool === "AskUserQuestion" ? question(input) : approval(tool, input, context)).pipe(
      // The interaction ended without an answer (cancelled, expired): stop the turn.
      Effect.catchTag("InteractionEnded", () => Effect.succeed(deny(CANCEL_MESSAGE, true)))
    )
}

/** Forks a relay into the turn's fiber set. */
export type RunRelay = (effect: Effect.Effect<PermissionResult>) => Fiber.RuntimeFiber<PermissionResult>

/** The turn's `canUseTool`: each ask runs as a fiber of the turn's set (`runFork`). */
export const canUseToolFor = (request: TurnRequest, sink: TurnSink, runFork: RunRelay): CanUseTool => {
  const decide = relay(request, sink)
  return (tool, input, context) => {
    if (context.signal.aborted) return Promise.resolve(deny(CANCEL_MESSAGE, true))
    const fiber = runFork(decide(tool, input, context))
    // Claude withdrew the request (interrupt, end of turn): the pending interaction goes stale.
    const onAbort = () => fiber.unsafeInterruptAsFork(fiber.id())
    context.signal.addEventListener("abort", onAbort, { once: true })
    // The SDK's callback contract is a Promise: the fiber's exit settles it (an interrupted or
    // failed relay denies and stops the turn).
    return new Promise<PermissionResult>((resolve) => {
      fiber.addObserver((exit) => {
        context.signal.removeEventListener("abort", onAbort)
        resolve(Exit.isSuccess(exit) ? exit.value : deny(CANCEL_MESSAGE, true))
      })
    })
  }
}
