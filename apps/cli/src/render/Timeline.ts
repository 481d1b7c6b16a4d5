import type { TaskEvent } from "@serverfs/domain"
import { printable } from "../output/Table.js"

/**
 * A task's timeline (`serverfs tasks show` / `tasks events`): each event's time, type and a
 * short summary of its payload — never the payload's text. Only the fields below, which hold
 * codes, states, ids and counts, are shown with their value; any other field is named with its
 * size (a string's length, an array's count), so an agent message, a prompt, a command or a path
 * is visible as "there is one" and never printed. Values are cut at SUMMARY_VALUE_CHARS.
 */
const SHOWN_FIELDS = new Set([
  "status",
  "error_code",
  "request_id",
  "kind",
  "category",
  "decision",
  "provider_active",
  "runtime",
  "outcome",
  "exit_code",
  "reason",
  "size_bytes",
  "bytes",
  "storage",
  "result_storage",
  "result_size_bytes",
  "phase",
  "item_id",
  "turn",
  "count"
])
const SUMMARY_VALUE_CHARS = 40
const MAX_SUMMARY_FIELDS = 6

const cut = (text: string): string =>
  [...text].length > SUMMARY_VALUE_CHARS ? `${[...text].slice(0, SUMMARY_VALUE_CHARS - 1).join("")}…` : text

const fieldSummary = (key: string, value: unknown): string | undefined => {
  if (SHOWN_FIELDS.has(key) && (value === null || ["string", "number", "boolean"].includes(typeof value)))
    return `${key}=${cut(printable(String(value)))}`
  if (typeof value === "string") return `${key}=(${[...value].length} chars)`
  if (Array.isArray(value)) return `${key}=(${value.length} items)`
  if (value !== null && typeof value === "object") return `${key}=(…)`
  if (value === null || typeof value === "number" || typeof value === "boolean") return `${key}=${value}`
  return undefined
}

export const payloadSummary = (payload: Readonly<Record<string, unknown>>): string => {
  const keys = Object.keys(payload).sort()
  const parts = keys.slice(0, MAX_SUMMARY_FIELDS).flatMap((key) => fieldSummary(key, payload[key]) ?? [])
  return keys.length > MAX_SUMMARY_FIELDS
    ? [...parts, `+${keys.length - MAX_SUMMARY_FIELDS} more`].join(" ")
    : parts.join(" ")
}

/** One event as `tasks events --json` prints it (one object per line): no payload text. */
export interface TimelineEntry {
  readonly event_id: number
  readonly created_at: string
  readonly event_type: string
  readonly summary: string
}

export const timelineEntry = (event: TaskEvent): TimelineEntry => ({
  event_id: event.event_id,
  created_at: event.created_at,
  event_type: printable(event.event_type),
  summary: payloadSummary(event.payload)
})

/**
 * One timeline line, with fixed column widths so the pages of a `--follow` line up without
 * knowing the events to come (a longer event type just pushes its own summary right).
 */
export const TIMELINE_HEADER = `${"#".padStart(6)}  ${"TIME".padEnd(24)}  ${"EVENT".padEnd(26)}  SUMMARY`

export const timelineLine = (entry: TimelineEntry): string =>
  `${String(entry.event_id).padStart(6)}  ${entry.created_at.padEnd(24)}  ${entry.event_type.padEnd(26)}  ${entry.summary}`.trimEnd()
