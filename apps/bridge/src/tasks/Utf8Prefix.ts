/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export const utf8Prefix = (text: string, maxBytes: number): string => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= maxBytes) return text
  let end = maxBytes
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--
  return bytes.subarray(0, end).toString("utf8")
}
