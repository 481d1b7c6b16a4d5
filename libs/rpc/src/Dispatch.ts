import type { BridgeMethod } from "@serverfs/domain"
import { Cause, Effect, Either, Exit, Option, Schema } from "effect"
import { methodSchemas } from "./MethodSchemas.js"
import type { DecodedRequest } from "./RequestDecoder.js"
import { BRIDGE_FAULT_MESSAGE, errorFrame, successFrame } from "./ResponseFrame.js"
import { isPlainObject } from "./StrictJson.js"

/** What the server calls for each accepted request; failures are `{_tag: CODE, message}`. */
export type RpcHandler = (
  method: BridgeMethod,
  params: unknown
) => Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>

const CODE = /^[A-Z][A-Z0-9_]*$/

const isErrorShape = (error: unknown): error is { readonly _tag: string; readonly message: string } =>
  typeof error === "object" &&
  error !== null &&
  typeof (error as { _tag?: unknown })._tag === "string" &&
  CODE.test((error as { _tag: string })._tag) &&
  typeof (error as { message?: unknown }).message === "string"

/**
 * The response frame for one decoded request. A rejected envelope is answered without calling
 * the handler. Otherwise the handler's result must pass the method's result schema (encoded to
 * its wire form; undeclared keys are dropped, so an internal field cannot leak), its typed
 * failure becomes `{code: _tag, message}`, and anything else — a defect, a thrown exception, a
 * result that fails the schema, a malformed failure — becomes BRIDGE_PROTOCOL_ERROR with a fixed
 * message: the defect's text stays in the bridge's own log.
 */
export const answer = (handle: RpcHandler, request: DecodedRequest): Effect.Effect<Uint8Array> => {
  if (request._tag === "Reject") {
    return Effect.succeed(errorFrame(request.requestId, request.code, request.message))
  }
  const { requestId, method, params } = request
  const fault = (reason: string, cause?: Cause.Cause<unknown>) =>
    Effect.as(
      Effect.logError(`rpc ${method}: ${reason}`, ...(cause === undefined ? [] : [cause])),
      errorFrame(requestId, "BRIDGE_PROTOCOL_ERROR", BRIDGE_FAULT_MESSAGE)
    )
  return Effect.flatMap(
    Effect.exit(Effect.suspend(() => handle(method, params))),
    (exit): Effect.Effect<Uint8Array> => {
      if (Exit.isSuccess(exit)) {
        const encoded = Schema.encodeUnknownEither(methodSchemas(method).result)(exit.value)
        if (Either.isLeft(encoded)) return fault("the handler returned a result that fails the result schema")
        if (!isPlainObject(encoded.right)) return fault("the handler returned a non-object result")
        return Effect.succeed(successFrame(requestId, encoded.right))
      }
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && isErrorShape(failure.value)) {
        return Effect.succeed(errorFrame(requestId, failure.value._tag, failure.value.message))
      }
      return fault("the handler failed unexpectedly", exit.cause)
    }
  )
}
