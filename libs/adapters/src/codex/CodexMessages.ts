import { type Option, Schema } from "effect"
import type { ServerNotificationEnvelope } from "./protocol/generated/ServerNotificationEnvelope.js"
import type { ServerRequest } from "./protocol/generated/ServerRequest.js"

/**
 * What arrives from a Codex App Server, decoded at the boundary (STYLE: a decoder, not a cast):
 * the JSON-RPC frame itself, and — for the notifications and server requests the adapter acts
 * on — the fields it reads, checked with Schema before a message is given its generated
 * protocol type. A message the adapter does not act on keeps only its method and id checked
 * (it is ignored, or declined by method). An acted-on message that does not decode is
 * `malformed`: a request is declined, a notification fails the turn instead of a defect deep
 * in the turn's code.
 */
const Id = Schema.Union(Schema.Number, Schema.String)

/** A JSON-RPC frame of the App Server protocol (no "jsonrpc" field). */
const Frame = Schema.parseJson(
  Schema.Struct({
    id: Schema.optional(Id),
    method: Schema.optional(Schema.String),
    params: Schema.optional(Schema.Unknown),
    result: Schema.optional(Schema.Unknown),
    error: Schema.optional(
      Schema.NullOr(
        Schema.Struct({ code: Schema.optional(Schema.Unknown), message: Schema.optional(Schema.Unknown) })
      )
    )
  })
)
export type Frame = typeof Frame.Type
export const decodeFrame = (text: string): Option.Option<Frame> => Schema.decodeUnknownOption(Frame)(text)

const S = Schema.String
const KNOWN_ITEMS: ReadonlySet<string> = new Set(["agentMessage", "fileChange", "commandExecution"])
/** The thread items whose fields the adapter reads; any other item only by type and id. */
const Item = Schema.Union(
  Schema.Struct({ type: Schema.Literal("agentMessage"), id: S, text: S, phase: Schema.NullOr(S) }),
  Schema.Struct({
    type: Schema.Literal("fileChange"),
    id: S,
    status: S,
    changes: Schema.Array(Schema.Struct({ path: S, kind: Schema.Struct({ type: S }) }))
  }),
  Schema.Struct({
    type: Schema.Literal("commandExecution"),
    id: S,
    command: S,
    cwd: S,
    status: S,
    exitCode: Schema.optional(Schema.NullOr(Schema.Number))
  }),
  Schema.Struct({ type: S.pipe(Schema.filter((t) => !KNOWN_ITEMS.has(t))), id: S })
)
const TurnShape = Schema.Struct({
  id: S,
  status: Schema.Literal("completed", "interrupted", "failed", "inProgress"),
  items: Schema.Array(Item),
  error: Schema.optional(Schema.NullOr(Schema.Struct({ message: S })))
})
const ItemParams = Schema.Struct({ threadId: S, turnId: S, item: Item })

/** The params the adapter reads, by notification method. */
const NOTIFICATIONS: Readonly<Record<string, (params: unknown) => boolean>> = {
  "turn/completed": Schema.is(Schema.Struct({ threadId: S, turn: TurnShape })),
  "item/started": Schema.is(ItemParams),
  "item/completed": Schema.is(ItemParams),
  error: Schema.is(
    Schema.Struct({ threadId: S, turnId: S, error: Schema.Struct({ message: S }), willRetry: Schema.Boolean })
  ),
  "serverRequest/resolved": Schema.is(Schema.Struct({ threadId: S, requestId: Id }))
}

const Addressed = { threadId: S, itemId: S }
const Question = Schema.Struct({
  id: S,
  header: S,
  question: S,
  isOther: Schema.Boolean,
  isSecret: Schema.Boolean,
  options: Schema.NullOr(Schema.Array(Schema.Struct({ label: S, description: S })))
})
/** The params the adapter reads, by relayed server-request method. */
const REQUESTS: Readonly<Record<string, (params: unknown) => boolean>> = {
  "item/commandExecution/requestApproval": Schema.is(
    Schema.Struct({ ...Addressed, approvalId: Schema.optional(Schema.NullOr(S)) })
  ),
  "item/fileChange/requestApproval": Schema.is(Schema.Struct(Addressed)),
  "item/permissions/requestApproval": Schema.is(
    Schema.Struct({ ...Addressed, cwd: S, permissions: Schema.Record({ key: S, value: Schema.Unknown }) })
  ),
  "item/tool/requestUserInput": Schema.is(Schema.Struct({ ...Addressed, questions: Schema.Array(Question) }))
}

const ThreadOpened = Schema.Struct({ thread: Schema.Struct({ id: S }), model: S })
/**
 * The response fields the adapter reads, by request method (turn/steer and turn/interrupt
 * results are not read).
 */
const RESPONSES: Readonly<Record<string, (result: unknown) => boolean>> = {
  initialize: Schema.is(Schema.Struct({ userAgent: S })),
  "thread/start": Schema.is(ThreadOpened),
  "thread/resume": Schema.is(ThreadOpened),
  "thread/read": Schema.is(
    Schema.Struct({
      thread: Schema.Struct({ status: Schema.Struct({ type: S }), turns: Schema.Array(TurnShape) })
    })
  ),
  "turn/start": Schema.is(Schema.Struct({ turn: Schema.Struct({ id: S }) }))
}

/** Does a response to `method` carry what the adapter reads of it? */
export const isResponseTo = <M extends string, R>(method: M, result: unknown): result is R =>
  RESPONSES[method]?.(result) ?? true

/** The frame's message, when what the adapter reads of it decodes. */
export const isNotification = (frame: object): frame is ServerNotificationEnvelope =>
  "method" in frame &&
  typeof frame.method === "string" &&
  (NOTIFICATIONS[frame.method]?.("params" in frame ? frame.params : undefined) ?? true)

export const isServerRequest = (frame: object): frame is ServerRequest =>
  "method" in frame &&
  typeof frame.method === "string" &&
  "id" in frame &&
  (typeof frame.id === "number" || typeof frame.id === "string") &&
  (REQUESTS[frame.method]?.("params" in frame ? frame.params : undefined) ?? true)
