import { AgentEventTooLarge, canonicalJson, sha256Hex } from "@serverfs/domain"
import { boundaryAtOrBefore, utf8Bytes, utf8Length } from "./Utf8.js"

/**
 * Fitting an event payload into `max_event_bytes` (bridge-internals §3, §6). The size is that
 * of the canonical JSON stored. An oversized `agent.message` is kept, shrunk to
 * `{text: <UTF-8-safe prefix>, truncated: true, size_bytes, sha256}` where size and hash are
 * those of the full text, so a reader can tell what was dropped; any other oversized event is
 * refused with AGENT_EVENT_TOO_LARGE (the bridge's try-append paths swallow that).
 */
export const SHRINKABLE_EVENT_TYPE = "agent.message"

export interface FittedPayload {
  readonly payload: Readonly<Record<string, unknown>>
  readonly json: string
}

const tooLarge = (eventType: string, maxEventBytes: number) =>
  new AgentEventTooLarge({ message: `a ${eventType} event is larger than ${maxEventBytes} bytes` })

export const fitEventPayload = (
  eventType: string,
  payload: Readonly<Record<string, unknown>>,
  maxEventBytes: number
): FittedPayload | AgentEventTooLarge => {
  const json = canonicalJson(payload)
  if (utf8Length(json) <= maxEventBytes) return { payload, json }
  const text = payload.text
  if (eventType !== SHRINKABLE_EVENT_TYPE || typeof text !== "string")
    return tooLarge(eventType, maxEventBytes)
  const summary = { truncated: true, size_bytes: utf8Length(text), sha256: sha256Hex(text) }
  const encode = (prefix: string) => canonicalJson({ ...summary, text: prefix })
  const overhead = utf8Length(encode(""))
  if (overhead > maxEventBytes) return tooLarge(eventType, maxEventBytes)
  // The longest character-aligned prefix whose encoding fits. JSON escaping makes the encoded
  // text at least as long as its bytes, so the answer lies in [0, max - overhead]; the encoded
  // size grows with the cut, so a binary search over byte cuts finds it.
  const bytes = utf8Bytes(text)
  const prefixAt = (cut: number) =>
    Buffer.from(bytes.buffer, bytes.byteOffset, boundaryAtOrBefore(bytes, cut)).toString("utf8")
  let low = 0
  let high = Math.min(bytes.length, maxEventBytes - overhead)
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (utf8Length(encode(prefixAt(middle))) <= maxEventBytes) low = middle
    else high = middle - 1
  }
  const prefix = prefixAt(low)
  return { payload: { ...summary, text: prefix }, json: encode(prefix) }
}
