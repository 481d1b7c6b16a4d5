import {
  AgentBridgeError,
  InvalidArgument,
  MutationIoError,
  ReadFailed,
  ResponseTooLarge,
  renderError
} from "@serverfs/domain"
import type { McpTransport } from "@serverfs/policy"
import type { AuditFields, AuditLog } from "@serverfs/telemetry-local"
import { Cause, Effect, Either, ParseResult, Schema } from "effect"
import type { AnyTool } from "./ToolDefinition.js"

/**
 * The call pipeline every tool goes through: strict decoding of the arguments (unknown fields
 * and wrong types refused, a boolean is never an integer), the handler, one rendering of any
 * error as `CODE: message`, the response budget, and exactly one audit line (tool-contracts §0,
 * §7).
 */
export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string } | Record<string, unknown>>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

type Failure = { readonly _tag: string; readonly message: string }

/**
 * Identifiers an audit line carries from the decoded input, on failure as on success
 * (tool-contracts §7): ids and choices, never content (prompts, messages and answers are not
 * among them).
 */
const INPUT_AUDIT_KEYS = [
  "task_id",
  "request_id",
  "decision",
  "runtime",
  "profile",
  "correlation_id",
  "idempotency_key"
]

/** Audit lines carry the caller's workdir/path strings, bounded in size. */
const MAX_AUDIT_TEXT = 1024
const auditText = (value: unknown): string | undefined =>
  typeof value === "string" ? value.slice(0, MAX_AUDIT_TEXT) : undefined

const argument = (args: unknown, key: string): unknown =>
  typeof args === "object" && args !== null ? (args as Record<string, unknown>)[key] : undefined

const invalidArgument = (tool: string, error: ParseResult.ParseError): InvalidArgument => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return new InvalidArgument({
    tool,
    field: issue?.path.map(String).join(".") ?? "",
    problem: issue?.message ?? "invalid arguments"
  })
}

export const errorResult = (failure: Failure): ToolResult => ({
  isError: true,
  content: [{ type: "text", text: renderError(failure) }]
})

export const successResult = (output: Record<string, unknown>): ToolResult => encodeSuccess(output).result

/**
 * A success result and its encoded size. The output is encoded once: the text content is that
 * JSON, and structuredContent serializes to the same JSON again, so the result costs twice its
 * byte length. On the wire the text is escaped once more, at most doubling it (every `"` and `\`
 * becomes two characters), so a message is at most 1.5 times the measured size: the budget's
 * maximum, 6 MiB, keeps it under the SDK client's 10 MiB.
 */
export const encodeSuccess = (
  output: Record<string, unknown>
): { readonly result: ToolResult; readonly bytes: number } => {
  const text = JSON.stringify(output)
  return {
    result: { content: [{ type: "text", text }], structuredContent: output },
    bytes: 2 * Buffer.byteLength(text)
  }
}

export const responseTooLarge = (what: string, maxBytes: number): ResponseTooLarge =>
  new ResponseTooLarge({
    message: `the result of ${what} exceeds the response budget of ${maxBytes} bytes; ask for less (a smaller limit or max_lines, a narrower path)`
  })

/**
 * Run one tool call. `maxResponseBytes` (SERVERFS_MAX_RESPONSE_BYTES) is enforced here, once for
 * every tool: a result over it becomes RESPONSE_TOO_LARGE (audited as a failure) instead of a
 * message the client would refuse — a refused message closes the connection (issue 14).
 */
export const callTool = (
  tool: AnyTool,
  args: unknown,
  audit: AuditLog,
  maxResponseBytes: number,
  transport: McpTransport = "stdio"
): Effect.Effect<ToolResult> =>
  Effect.gen(function* () {
    const started = performance.now()
    const decoded = Schema.decodeUnknownEither(tool.input, { onExcessProperty: "error" })(args ?? {})
    const ran: Either.Either<Record<string, unknown>, Failure> = Either.isLeft(decoded)
      ? Either.left(invalidArgument(tool.name, decoded.left))
      : yield* tool.run(decoded.right).pipe(
          Effect.either,
          // A defect is reported by code only; its text could carry anything.
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logError("unexpected tool failure", Cause.die(defect)).pipe(
                Effect.annotateLogs({ tool: tool.name })
              ),
              Either.left(
                unexpectedFailure(
                  tool,
                  auditText(argument(args, "workdir")) ?? "",
                  auditText(argument(args, "path")) ?? ""
                )
              )
            )
          )
        )
    const encoded = Either.map(ran, (output) => {
      if (tool.render === undefined) return encodeSuccess(output)
      const { bytes, ...result } = tool.render(output)
      return { result, bytes }
    })
    const outcome: Either.Either<{ readonly result: ToolResult; readonly bytes: number }, Failure> =
      Either.isRight(encoded) && encoded.right.bytes > maxResponseBytes
        ? Either.left(responseTooLarge(tool.name, maxResponseBytes))
        : encoded
    const fields: Record<string, AuditFields[string]> = {
      tool: tool.name,
      transport,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      success: Either.isRight(outcome),
      workdir: auditText(argument(args, "workdir")),
      path: auditText(argument(args, "path"))
    }
    if (Either.isRight(decoded)) {
      for (const key of INPUT_AUDIT_KEYS) {
        const value = auditText(argument(decoded.right, key))
        if (value !== undefined) fields[key] = value
      }
    }
    if (Either.isRight(ran) && Either.isRight(outcome) && Either.isRight(decoded)) {
      Object.assign(fields, tool.audit(decoded.right, ran.right))
    } else if (Either.isLeft(outcome)) {
      fields.error_code = outcome.left._tag
    }
    yield* audit.emit("INFO", "tool_call", fields)
    return Either.match(outcome, { onLeft: errorResult, onRight: (success) => success.result })
  })

const unexpectedFailure = (tool: AnyTool, workdir: string, path: string): Failure => {
  switch (tool.unexpected) {
    case "READ_FAILED":
      return new ReadFailed({ workdir, path })
    case "MUTATION_IO_ERROR":
      return new MutationIoError({ workdir, path })
    case "AGENT_BRIDGE_ERROR":
      return new AgentBridgeError({ message: "Agent Bridge request failed" })
  }
}
