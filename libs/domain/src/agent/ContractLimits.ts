/**
 * The agent plane's frozen limits (spec v0.3 §23, v0.7 §2, bridge-internals §6): values a client
 * may rely on, so they live here once rather than beside each check. Limits an operator
 * configures (prompt, events, results, budget) are settings (libs/policy BridgeSettings), not
 * contract values.
 */

/** The largest `task.send_message` text, in UTF-8 bytes. */
export const MAX_MESSAGE_BYTES = 65_536
/** The largest approval/question payload or resolution the bridge persists, in UTF-8 bytes. */
export const MAX_INTERACTION_BYTES = 65_536
/** The largest correlation_id / idempotency_key, in UTF-8 bytes. */
export const MAX_TOKEN_BYTES = 256
/** The largest requested model id, in UTF-8 bytes. */
export const MAX_MODEL_BYTES = 512
/** The preview of a spooled result kept as `final_response`, in UTF-8 bytes. */
export const RESULT_PREVIEW_BYTES = 65_536
/** `task.events` without a limit returns this many events. */
export const DEFAULT_EVENTS_PAGE = 100
/** The largest `task.events` page. */
export const MAX_EVENTS_PAGE = 500
/** The largest `task.read_result` chunk, in bytes. */
export const MAX_RESULT_CHUNK_BYTES = 65_536
/** The longest diff one `file_changes[]` item of an approval carries, in UTF-8 bytes. */
export const MAX_FILE_CHANGE_DIFF_BYTES = 16_384
/** The most diff text all `file_changes[]` of one approval carry together, in UTF-8 bytes. */
export const MAX_FILE_CHANGES_DIFF_BYTES = 65_536
