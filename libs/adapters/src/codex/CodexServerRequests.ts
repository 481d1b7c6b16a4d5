import type { ApprovalPayload, ApprovalResolution, HostPathRedaction } from "@serverfs/domain"
import { Effect, Fiber, type Scope } from "effect"
import type { TurnSink } from "../ProviderAdapter.js"
import {
  type CodexFileChange,
  commandApproval,
  fileChangeApproval,
  nativeDecision,
  PERMISSION_DENIED_REPLY,
  permissionApproval,
  permissionReply,
  questionPayload,
  questionReply
} from "./CodexMapping.js"
import { type CodexConnection, JSONRPC_SERVER_ERROR } from "./CodexTransport.js"
import type { ActiveTurn } from "./CodexTurns.js"
import type { RequestId } from "./protocol/generated/RequestId.js"
import type { ServerRequest } from "./protocol/generated/ServerRequest.js"

/**
 * Codex's server requests during one turn (spec v0.3 §15–§16): the four ServerFS relays to the
 * human (command, file-change and permission approvals, user-input questions) and every other
 * one declined at once. A relayed request survives a reconnect: Codex replays it, and the replay
 * is answered with the same ServerFS request's decision on the new connection.
 */
type Reply =
  | { readonly _tag: "result"; readonly value: unknown }
  | { readonly _tag: "error"; readonly message: string }

/** A Codex server request relayed to the human; survives a reconnect (Codex replays it). */
interface Interaction {
  readonly key: string
  requestId: RequestId
  connection: CodexConnection
  reply: Reply | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

const RELAYED_METHODS = [
  "item/commandExecution/requestApproval",
  "item/fileChange/requestApproval",
  "item/permissions/requestApproval",
  "item/tool/requestUserInput"
] as const
type RelayedRequest = Extract<ServerRequest, { readonly method: (typeof RELAYED_METHODS)[number] }>
const RELAYED: ReadonlySet<string> = new Set(RELAYED_METHODS)
const isRelayed = (message: ServerRequest): message is RelayedRequest => RELAYED.has(message.method)

/** The thread and item a server request names (every relayed request has both). */
const addressOf = (message: ServerRequest): { readonly threadId: unknown; readonly itemId: unknown } => {
  const params: unknown = message.params
  if (typeof params !== "object" || params === null) return { threadId: undefined, itemId: undefined }
  return {
    threadId: "threadId" in params ? params.threadId : undefined,
    itemId: "itemId" in params ? params.itemId : undefined
  }
}

export interface TurnRequests {
  readonly turn: ActiveTurn
  readonly threadId: string
  readonly sink: TurnSink
  readonly redaction: HostPathRedaction
  /** The changes of file-change items in progress, by item id (an approval names its item). */
  readonly fileChanges: ReadonlyMap<string, ReadonlyArray<CodexFileChange>>
  /**
   * Where relays run: the adapter's scope, not the turn's — a relay of a turn the daemon lost is
   * left for the bridge to settle after the run ended (see `interruptAll`).
   */
  readonly relayScope: Scope.Scope
}

export const makeServerRequests = (ctx: TurnRequests) => {
  const { turn, threadId, sink, redaction } = ctx
  const interactions = new Map<string, Interaction>()

  const send = (interaction: Interaction): Effect.Effect<void> =>
    Effect.suspend(() => {
      const reply = interaction.reply
      if (reply === undefined) return Effect.void
      return (
        reply._tag === "result"
          ? interaction.connection.respond(interaction.requestId, reply.value)
          : interaction.connection.respondError(interaction.requestId, JSONRPC_SERVER_ERROR, reply.message)
      ).pipe(Effect.asVoid)
    })

  const relay = (interaction: Interaction, decide: Effect.Effect<Reply>) =>
    Effect.flatMap(decide, (reply) =>
      Effect.suspend(() => {
        interaction.reply = reply
        return send(interaction)
      })
    )

  /** An ended interaction (cancelled, expired, staled by the bridge) stops the turn. */
  const ended = (reply: Reply) =>
    Effect.sync((): Reply => {
      turn.cancelRequested = true
      return reply
    })

  const decline = (method: string, reason: string, id: RequestId, on: CodexConnection) =>
    Effect.zipRight(
      on.respondError(id, JSONRPC_SERVER_ERROR, reason),
      sink.event("provider.request_declined", { method, reason })
    )

  /** Relay an approval; its native reply. cancel_task also stops the turn. */
  const approval = (
    payload: ApprovalPayload,
    replyFor: (resolution: ApprovalResolution) => unknown,
    onEnded: unknown
  ): Effect.Effect<Reply> =>
    sink.requestApproval(payload).pipe(
      Effect.map((resolution): Reply => {
        if (resolution.decision === "cancel_task") turn.cancelRequested = true
        return { _tag: "result", value: replyFor(resolution) }
      }),
      Effect.catchTag("InteractionEnded", () => ended({ _tag: "result", value: onEnded }))
    )
  const decisionReply = (resolution: ApprovalResolution) => ({
    decision: nativeDecision(resolution.decision)
  })
  const CANCELLED = { decision: "cancel" }

  /** The relay of a request, or why it is declined. */
  const decideFor = (message: RelayedRequest): Effect.Effect<Reply> | string => {
    switch (message.method) {
      case "item/commandExecution/requestApproval":
        return approval(commandApproval(message.params, redaction), decisionReply, CANCELLED)
      case "item/fileChange/requestApproval":
        return approval(
          fileChangeApproval(message.params, ctx.fileChanges.get(message.params.itemId) ?? [], redaction),
          decisionReply,
          CANCELLED
        )
      case "item/permissions/requestApproval": {
        const params = message.params
        return approval(
          permissionApproval(params, redaction),
          (resolution) => permissionReply(params, resolution),
          PERMISSION_DENIED_REPLY
        )
      }
      case "item/tool/requestUserInput": {
        const params = message.params
        const payload = questionPayload(params)
        if (payload === undefined)
          return "PERMISSION_OUTSIDE_POLICY: ServerFS does not relay secret questions"
        return sink.requestQuestion(payload).pipe(
          Effect.map((resolution): Reply => ({ _tag: "result", value: questionReply(params, resolution) })),
          Effect.catchTag("InteractionEnded", () =>
            ended({ _tag: "error", message: "the question was not answered" })
          )
        )
      }
    }
  }

  const onServerRequest = (message: ServerRequest, on: CodexConnection): Effect.Effect<void> =>
    Effect.gen(function* () {
      const relayable = isRelayed(message)
      const address = addressOf(message)
      if (relayable && address.threadId !== threadId) {
        return yield* decline(message.method, "not a request of this ServerFS task", message.id, on)
      }
      const approvalId =
        message.method === "item/commandExecution/requestApproval" ? (message.params.approvalId ?? "") : ""
      const key = `${message.method}|${String(address.itemId)}|${approvalId}`
      const known = relayable ? interactions.get(key) : undefined
      if (known !== undefined) {
        // Replayed after a reconnect: the same ServerFS request, answered on this connection.
        known.requestId = message.id
        known.connection = on
        return yield* send(known)
      }
      const decision = relayable
        ? decideFor(message)
        : `ServerFS does not support the Codex request ${message.method}`
      if (typeof decision === "string") return yield* decline(message.method, decision, message.id, on)
      const interaction: Interaction = {
        key,
        requestId: message.id,
        connection: on,
        reply: undefined,
        fiber: undefined
      }
      interactions.set(key, interaction)
      interaction.fiber = yield* Effect.forkIn(relay(interaction, decision), ctx.relayScope)
    })

  /** Stop one relay still waiting for the human: the ServerFS request goes stale. */
  const withdraw = (interaction: Interaction) =>
    Effect.suspend(() => {
      interactions.delete(interaction.key)
      return interaction.reply === undefined && interaction.fiber !== undefined
        ? Fiber.interrupt(interaction.fiber)
        : Effect.void
    })

  /** Codex withdrew a request (answered elsewhere, turn ended): the ServerFS request goes stale. */
  const onResolved = (requestId: RequestId) =>
    Effect.forEach(
      [...interactions.values()].filter((i) => i.requestId === requestId && i.connection === turn.connection),
      withdraw,
      { discard: true }
    )

  /** After a reconnect: requests Codex did not replay on `current` were withdrawn. */
  const dropUnreplayed = (current: CodexConnection) =>
    Effect.forEach(
      [...interactions.values()].filter((i) => i.connection !== current),
      withdraw,
      { discard: true }
    )

  /** The run is over: every relay still waiting is stopped (not for a lost turn: the bridge settles those). */
  const interruptAll = Effect.suspend(() =>
    turn.lost
      ? Effect.void
      : Effect.forEach(
          interactions.values(),
          (i) => (i.fiber === undefined ? Effect.void : Fiber.interrupt(i.fiber)),
          {
            discard: true
          }
        )
  )

  return { onServerRequest, onResolved, dropUnreplayed, interruptAll, decline }
}
