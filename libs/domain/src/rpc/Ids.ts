import { Schema } from "effect"

/**
 * Branded ids of the bridge contract. The wire form is a plain string and so is every check
 * (a wrong type is still refused as "Expected string, actual …": the brand is added after the
 * string is decoded, so the INVALID_REQUEST texts do not change); the brand only stops a task id
 * from being passed where an interaction's request id is meant, and back.
 */
const TaskIdBrand = Schema.String.pipe(Schema.brand("TaskId"))
export type TaskId = typeof TaskIdBrand.Type
/** A task id in params: decoded as a string, branded after. */
export const TaskId = Schema.compose(Schema.String, TaskIdBrand)
export const taskId = (id: string): TaskId => TaskIdBrand.make(id)

/** The id of a pending approval or question (not the RPC envelope's request_id). */
const PendingRequestIdBrand = Schema.String.pipe(Schema.brand("PendingRequestId"))
export type PendingRequestId = typeof PendingRequestIdBrand.Type
export const PendingRequestId = Schema.compose(Schema.String, PendingRequestIdBrand)
export const pendingRequestId = (id: string): PendingRequestId => PendingRequestIdBrand.make(id)

/** The RPC envelope's request_id, echoed in the response (bridge-internals §1.4). */
const RpcRequestIdBrand = Schema.String.pipe(Schema.brand("RpcRequestId"))
export type RpcRequestId = typeof RpcRequestIdBrand.Type
export const rpcRequestId = (id: string): RpcRequestId => RpcRequestIdBrand.make(id)
