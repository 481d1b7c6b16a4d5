import {
  BRIDGE_CONTRACT,
  type BridgeMethod,
  type DecodedParams,
  type MethodError,
  type MethodResult
} from "@serverfs/domain"
import { Cause, Effect, Either, Exit, Option, Schema } from "effect"
import type { DecodedRequest } from "./RequestDecoder.js"
import { bridgeFault, errorFrame, successFrame } from "./ResponseFrame.js"
import { isPlainObject } from "./StrictJson.js"

/**
 * What the server calls for each accepted request, typed by method: the params its schema
 * decoded, and the result and frozen errors the contract allows for that method
 * (libs/domain rpc/Methods.ts). Build one from a handler per method with {@link handlerOf}.
 */
export type RpcHandler = <M extends BridgeMethod>(
  method: M,
  params: DecodedParams<M>
) => Effect.Effect<MethodResult<M>, MethodError<M>>

/** One handler per bridge method. */
export type BridgeHandlers = {
  readonly [M in BridgeMethod]: (params: DecodedParams<M>) => Effect.Effect<MethodResult<M>, MethodError<M>>
}

/** The server's handler for a table of per-method handlers (a correlated lookup, no cast). */
export const handlerOf =
  (handlers: BridgeHandlers): RpcHandler =>
  (method, params) =>
    handlers[method](params)

/**
 * Narrow a failure to the method's contract: one of the method's frozen errors is kept; any other
 * failure is a bug (a code the method does not document) and becomes a defect, which the server
 * logs with its cause and answers BRIDGE_PROTOCOL_ERROR — never relabelled as a frozen code.
 */
export const withinContract =
  <M extends BridgeMethod>(method: M) =>
  <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, MethodError<M>> =>
    Effect.catchAll(effect, (error) =>
      BRIDGE_CONTRACT[method].errors.has(error) ? Effect.fail(error) : Effect.die(error)
    )

/**
 * The frame for one call: the handler's result must pass the method's result schema (encoded to
 * its wire form; undeclared keys are dropped, so an internal field cannot leak), and its failure
 * must be one of the method's frozen errors, sent as `{code: _tag, message}`. Anything else — a
 * defect, a thrown exception, an interruption, a result that fails the schema, a failure outside
 * the contract — is a bug, never relabelled as a frozen code: it is logged with its cause and
 * answered BRIDGE_PROTOCOL_ERROR with a fixed message (its text stays in the bridge's log).
 */
const call = <M extends BridgeMethod>(
  handle: RpcHandler,
  requestId: string,
  method: M,
  params: DecodedParams<M>
): Effect.Effect<Uint8Array> => {
  const contract = BRIDGE_CONTRACT[method]
  const fault = (reason: string, cause?: Cause.Cause<unknown>) =>
    Effect.as(
      Effect.logError(`rpc ${method}: ${reason}`, ...(cause === undefined ? [] : [cause])),
      errorFrame(requestId, bridgeFault())
    )
  return Effect.flatMap(
    Effect.exit(Effect.suspend(() => handle(method, params))),
    (exit): Effect.Effect<Uint8Array> => {
      if (Exit.isSuccess(exit)) {
        const encoded = Schema.encodeEither(contract.result)(exit.value)
        if (Either.isLeft(encoded)) return fault("the handler returned a result that fails the result schema")
        if (!isPlainObject(encoded.right)) return fault("the handler returned a non-object result")
        return Effect.succeed(successFrame(requestId, encoded.right))
      }
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && contract.errors.has(failure.value)) {
        return Effect.succeed(errorFrame(requestId, failure.value))
      }
      return fault(
        Option.isSome(failure)
          ? "the handler failed with an error outside the method's contract"
          : "the handler died (a defect)",
        exit.cause
      )
    }
  )
}

/** The response frame for one decoded request; a rejected envelope never reaches the handler. */
export const answer = (handle: RpcHandler, request: DecodedRequest): Effect.Effect<Uint8Array> =>
  request._tag === "Reject"
    ? Effect.succeed(errorFrame(request.requestId, request.error))
    : call(handle, request.requestId, request.method, request.params)
