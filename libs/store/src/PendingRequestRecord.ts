import { RequestKind, RequestStatus } from "@serverfs/domain"
import { Schema } from "effect"

/**
 * One row of `pending_requests` (bridge-internals §5, §7). Payload and resolution stay the
 * stored canonical JSON text; the bridge parses them into the view. A request is `pending`
 * until it is `resolved` (an answer won the compare-and-set) or `stale` (expired, abandoned by
 * the provider, or its task ended).
 */
export const PendingRequestRecord = Schema.Struct({
  request_id: Schema.String,
  task_id: Schema.String,
  kind: RequestKind,
  status: RequestStatus,
  payload_json: Schema.String,
  created_at: Schema.String,
  expires_at: Schema.String,
  resolved_at: Schema.NullOr(Schema.String),
  resolution_json: Schema.NullOr(Schema.String)
})
export type PendingRequestRecord = typeof PendingRequestRecord.Type
