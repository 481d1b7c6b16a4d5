/** NDJSON framing as a pure function of the chunks received: boundaries and the byte limit. */
import { describe, expect, it } from "@effect/vitest"
import { LineBuffer, parseJsonLine, stringifyJson } from "../src/index.js"

const bytes = (text: string) => Buffer.from(text, "utf8")
const text = (frame: ReturnType<LineBuffer["take"]>) =>
  frame?._tag === "Line" ? Buffer.from(frame.bytes).toString("utf8") : frame?._tag

describe("LineBuffer", () => {
  it("splits lines across and within chunks, keeping multi-byte characters whole", () => {
    const buffer = new LineBuffer(100)
    const all = bytes("ab€\ncd\n\nef")
    // Feed one byte at a time: the euro sign arrives in three pieces.
    const lines: Array<string | undefined> = []
    for (const byte of all) {
      buffer.push(Uint8Array.of(byte))
      for (let frame = buffer.take(); frame !== undefined; frame = buffer.take()) lines.push(text(frame))
    }
    expect(lines).toEqual(["ab€", "cd", ""])
    buffer.push(bytes("gh\n"))
    expect(text(buffer.take())).toBe("efgh")
    expect(buffer.take()).toBeUndefined()
  })

  it("a line of exactly the limit passes; one byte more is TooLarge, with or without its newline", () => {
    const exact = new LineBuffer(4)
    exact.push(bytes("abcd\n"))
    expect(text(exact.take())).toBe("abcd")

    const withNewline = new LineBuffer(4)
    withNewline.push(bytes("abcde\n"))
    expect(text(withNewline.take())).toBe("TooLarge")

    const growing = new LineBuffer(4)
    growing.push(bytes("abc"))
    expect(growing.take()).toBeUndefined()
    growing.push(bytes("de"))
    // No newline yet, but already over the limit: no need to wait for more.
    expect(text(growing.take())).toBe("TooLarge")
  })

  it("the limit counts bytes, not characters", () => {
    const buffer = new LineBuffer(5)
    buffer.push(bytes("ééé\n")) // 3 characters, 6 bytes
    expect(text(buffer.take())).toBe("TooLarge")
  })

  it("an overflow is final: later lines are not trusted", () => {
    const buffer = new LineBuffer(3)
    buffer.push(bytes("abcdef"))
    expect(text(buffer.take())).toBe("TooLarge")
    buffer.push(bytes("\nok\n"))
    expect(text(buffer.take())).toBe("TooLarge")
  })

  it("earlier complete lines are delivered before a later oversized one", () => {
    const buffer = new LineBuffer(3)
    buffer.push(bytes("ab\nabcdef\n"))
    expect(text(buffer.take())).toBe("ab")
    expect(text(buffer.take())).toBe("TooLarge")
  })
})

describe("strict JSON", () => {
  it("rejects invalid UTF-8, NaN/Infinity constants and literals overflowing to Infinity", () => {
    expect(parseJsonLine(Uint8Array.of(0x22, 0xff, 0x22))).toEqual({ ok: false, problem: "not UTF-8" })
    expect(parseJsonLine(bytes("NaN"))).toEqual({ ok: false, problem: "not JSON" })
    expect(parseJsonLine(bytes("[-Infinity]"))).toEqual({ ok: false, problem: "not JSON" })
    expect(parseJsonLine(bytes('{"a":[1e999]}'))).toEqual({ ok: false, problem: "non-finite number" })
    expect(parseJsonLine(bytes("\ufeff{}"))).toEqual({ ok: false, problem: "not JSON" })
    expect(parseJsonLine(bytes(' {"a":1} \r'))).toEqual({ ok: true, value: { a: 1 } })
  })

  it("refuses to write what JSON cannot carry faithfully", () => {
    expect(stringifyJson({ a: Number.NaN })).toBeUndefined()
    expect(stringifyJson({ a: 1n })).toBeUndefined()
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(stringifyJson(cycle)).toBeUndefined()
    expect(stringifyJson({ a: "\ud800" })).toBe('{"a":"\\ud800"}')
  })
})
