/**
 * Strict RFC 4648 §4 base64 (tool-contracts §2.13): only A–Z a–z 0–9 + /, a length that is a
 * multiple of 4, "=" only as the last one or two characters. Whitespace, line breaks, the URL
 * alphabet, missing or misplaced padding and any non-ASCII character are refused — Node's own
 * decoder silently skips all of them, so it only runs after this check.
 *
 * Linear in the input, one pass, no RegExp (an 11 MB string through a backtracking regex could
 * exhaust its stack).
 */
const ALPHABET = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  ALPHABET[c.charCodeAt(0)] = 1
const PAD = 0x3d

/** Longest encoding of at most `maxBytes` decoded bytes: 4·ceil(max/3). */
export const maxEncodedLength = (maxBytes: number): number => 4 * Math.ceil(maxBytes / 3)

export const isStrictBase64 = (text: string): boolean => {
  const length = text.length
  if (length % 4 !== 0) return false
  let padding = 0
  if (length > 0 && text.charCodeAt(length - 1) === PAD) padding = text.charCodeAt(length - 2) === PAD ? 2 : 1
  const body = length - padding
  for (let i = 0; i < body; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 128 || ALPHABET[unit] !== 1) return false
  }
  return true
}

/** The decoded bytes, or undefined when the text is not strict base64. */
export const decodeStrictBase64 = (text: string): Buffer | undefined =>
  isStrictBase64(text) ? Buffer.from(text, "base64") : undefined
