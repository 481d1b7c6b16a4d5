/**
 * The text contract on what mutations write (spec v0.2 §6): no NUL, and nothing that UTF-8
 * cannot encode (a lone surrogate would silently become U+FFFD). Whatever a mutation stores is
 * therefore readable by every read channel.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const isStorableText = (text: string): boolean => !text.includes("\0") && !LONE_SURROGATE.test(text)

export const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8")

export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])
