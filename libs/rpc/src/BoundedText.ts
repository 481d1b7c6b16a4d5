import { escapeControl } from "@serverfs/domain"

/**
 * Caller-supplied text (a method name, a field name, a schema complaint quoting a value) that
 * goes back into an error message: bounded so a 1 MiB name cannot become a 1 MiB message, and
 * with control characters escaped so a message never carries a raw newline or terminal escape.
 */
const PLAIN = /^[\x21-\x7e]*$/

const cut = (text: string, maxChars: number): { readonly head: string; readonly cut: boolean } => {
  // Slice by code units first so a huge input is never spread into an array of characters.
  const chars = Array.from(text.slice(0, maxChars * 2)).slice(0, maxChars)
  const head = chars.join("")
  return { head, cut: head.length < text.length }
}

/** A name as-is when it is short printable ASCII, otherwise JSON-quoted, escaped and shortened. */
export const shownName = (text: string, maxChars = 128): string => {
  if (text.length > 0 && text.length <= maxChars && PLAIN.test(text)) return text
  const { head, cut: wasCut } = cut(text, maxChars)
  return `${JSON.stringify(head)}${wasCut ? "…" : ""}`
}

/** Free text with control characters escaped as \uXXXX and at most `maxChars` characters. */
export const shownText = (text: string, maxChars = 200): string => {
  const { head, cut: wasCut } = cut(text, maxChars)
  return `${escapeControl(head)}${wasCut ? "…" : ""}`
}
