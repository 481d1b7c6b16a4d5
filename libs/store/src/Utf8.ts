/**
 * UTF-8 byte arithmetic shared by the event shrink (bridge-internals §6) and the result spool
 * reader (spec v0.7 §2.5): a prefix or a chunk never ends inside a multi-byte character, so
 * concatenating the returned pieces reproduces the stored bytes exactly.
 */

const encoder = new TextEncoder()
const fatalDecoder = new TextDecoder("utf-8", { fatal: true })

export const utf8Bytes = (text: string): Uint8Array => encoder.encode(text)

export const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8")

/** Is `byte` a continuation byte (0b10xx_xxxx), i.e. not the first byte of a character? */
export const isContinuationByte = (byte: number): boolean => (byte & 0xc0) === 0x80

/** The encoded length a lead byte announces (1 for ASCII and for bytes that cannot lead). */
const announcedLength = (lead: number): number => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1)

/**
 * The longest prefix of `bytes[0, limit)` that does not end inside a character: when the cut
 * falls on a continuation byte, it moves back to that character's lead byte.
 */
export const boundaryAtOrBefore = (bytes: Uint8Array, limit: number): number => {
  if (limit >= bytes.length) return bytes.length
  let cut = Math.max(0, limit)
  while (cut > 0 && isContinuationByte(bytes[cut] ?? 0)) cut--
  return cut
}

/** The longest prefix of `text` whose UTF-8 encoding is at most `maxBytes` bytes. */
export const utf8Prefix = (text: string, maxBytes: number): string => {
  if (utf8Length(text) <= maxBytes) return text
  const bytes = utf8Bytes(text)
  return Buffer.from(bytes.buffer, bytes.byteOffset, boundaryAtOrBefore(bytes, maxBytes)).toString("utf8")
}

/**
 * Where a chunk read from `bytes` (which may stop before the end of the stored text) has to end
 * so it does not split a character: the trailing partial character, if any, is cut off.
 */
export const completeCharactersEnd = (bytes: Uint8Array): number => {
  let start = bytes.length - 1
  while (start > 0 && bytes.length - start < 4 && isContinuationByte(bytes[start] ?? 0)) start--
  if (start < 0) return 0
  return start + announcedLength(bytes[start] ?? 0) > bytes.length ? start : bytes.length
}

/** Strict UTF-8 decoding: undefined for bytes that are not well-formed UTF-8. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return fatalDecoder.decode(bytes)
  } catch {
    return undefined
  }
}
