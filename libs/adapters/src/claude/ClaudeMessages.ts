import { Option, Schema } from "effect"
import type { ResultSummary } from "./ClaudeMapping.js"

/**
 * The Agent SDK's messages the adapter acts on, decoded with Schema instead of trusted by type:
 * the SDK relays what the CLI printed, and a CLI of another version may print other shapes.
 * Whatever does not decode is `Other` and ignored (a new message kind is not a failure).
 */
export type ToolBlock =
  | { readonly _tag: "Text"; readonly text: string }
  | {
      readonly _tag: "ToolUse"
      readonly id: string
      readonly name: string
      readonly input: Record<string, unknown>
    }

export type TurnMessage =
  | {
      readonly _tag: "Init"
      readonly sessionId: string
      readonly permissionMode: string
      readonly claudeCodeVersion: string
    }
  | { readonly _tag: "ApiRetry"; readonly status: number | null; readonly error: string }
  | { readonly _tag: "ApiError"; readonly error: string }
  | { readonly _tag: "Assistant"; readonly blocks: ReadonlyArray<ToolBlock> }
  | {
      readonly _tag: "ToolResults"
      readonly results: ReadonlyArray<{ readonly toolUseId: string; readonly isError: boolean }>
    }
  | { readonly _tag: "Result"; readonly result: ResultSummary }
  | { readonly _tag: "Other" }

const Init = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("init"),
  session_id: Schema.String,
  permissionMode: Schema.String,
  claude_code_version: Schema.String
})
const ApiRetry = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("api_retry"),
  error_status: Schema.NullOr(Schema.Number),
  error: Schema.String
})
/** A synthetic assistant message standing for an API failure. */
const ApiError = Schema.Struct({ type: Schema.Literal("assistant"), error: Schema.String })
/** Top-level only: a subagent's messages (parent_tool_use_id set) are not the turn's. */
const Assistant = Schema.Struct({
  type: Schema.Literal("assistant"),
  parent_tool_use_id: Schema.Null,
  message: Schema.Struct({ content: Schema.Array(Schema.Unknown) })
})
const User = Schema.Struct({
  type: Schema.Literal("user"),
  parent_tool_use_id: Schema.Null,
  message: Schema.Struct({ content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)) })
})
const Success = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Schema.Literal("success"),
  is_error: Schema.Boolean,
  result: Schema.String
})
const Failure = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Schema.String,
  errors: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})
const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.optional(Schema.Unknown)
})
const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  is_error: Schema.optional(Schema.Boolean)
})
const ToolInput = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const decoder = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownOption(schema)
const init = decoder(Init)
const apiRetry = decoder(ApiRetry)
const apiError = decoder(ApiError)
const assistant = decoder(Assistant)
const user = decoder(User)
const success = decoder(Success)
const failure = decoder(Failure)
const textBlock = decoder(TextBlock)
const toolUseBlock = decoder(ToolUseBlock)
const toolResultBlock = decoder(ToolResultBlock)
const toolInput = decoder(ToolInput)

const blockOf = (block: unknown): ToolBlock | undefined => {
  const text = textBlock(block)
  // Empty text blocks carry nothing to report.
  if (Option.isSome(text))
    return text.value.text.trim() === "" ? undefined : { _tag: "Text", text: text.value.text }
  const tool = toolUseBlock(block)
  if (Option.isNone(tool)) return undefined
  return {
    _tag: "ToolUse",
    id: tool.value.id,
    name: tool.value.name,
    input: Option.getOrElse(toolInput(tool.value.input), () => ({}))
  }
}

export const decodeTurnMessage = (message: unknown): TurnMessage => {
  const i = init(message)
  if (Option.isSome(i)) {
    return {
      _tag: "Init",
      sessionId: i.value.session_id,
      permissionMode: i.value.permissionMode,
      claudeCodeVersion: i.value.claude_code_version
    }
  }
  const retry = apiRetry(message)
  if (Option.isSome(retry))
    return { _tag: "ApiRetry", status: retry.value.error_status, error: retry.value.error }
  const error = apiError(message)
  if (Option.isSome(error)) return { _tag: "ApiError", error: error.value.error }
  const a = assistant(message)
  if (Option.isSome(a)) {
    return { _tag: "Assistant", blocks: a.value.message.content.flatMap((b) => blockOf(b) ?? []) }
  }
  const u = user(message)
  if (Option.isSome(u)) {
    const content = u.value.message.content
    return {
      _tag: "ToolResults",
      results:
        typeof content === "string"
          ? []
          : content.flatMap((b) =>
              Option.match(toolResultBlock(b), {
                onNone: () => [],
                onSome: (r) => [{ toolUseId: r.tool_use_id, isError: r.is_error === true }]
              })
            )
    }
  }
  const ok = success(message)
  if (Option.isSome(ok)) {
    return { _tag: "Result", result: { _tag: "Success", isError: ok.value.is_error, text: ok.value.result } }
  }
  const failed = failure(message)
  if (Option.isSome(failed)) return { _tag: "Result", result: { _tag: "Error", errors: failed.value.errors } }
  return { _tag: "Other" }
}
