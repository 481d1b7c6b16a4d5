/** The `CODE` of a tool error text, extracted the way clients do: the first `UPPER_CASE:` token. */
export const errorCodeOf = (text: string): string | undefined => /\b([A-Z][A-Z0-9_]+):/.exec(text)?.[1]

/** The text of a tool result's first text content block ("" when there is none). */
export const textOf = (result: unknown): string => {
  const content = (result as { readonly content?: unknown }).content
  if (!Array.isArray(content)) return ""
  const block = content.find((c: { readonly type?: unknown }) => c.type === "text") as
    | { readonly text?: unknown }
    | undefined
  return typeof block?.text === "string" ? block.text : ""
}
