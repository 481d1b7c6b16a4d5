import { describe, expect, it } from "@effect/vitest"
import {
  agentMode,
  agentRuntimes,
  globList,
  lenientBool,
  lenientFloat,
  lenientInt,
  logLevel,
  strictBool,
  strictInt,
  text,
  unique
} from "@serverfs/policy"
import { Either } from "effect"

const right = <A>(value: A) => Either.right(value)
const isLeft = (e: Either.Either<unknown, string>) => Either.isLeft(e)

describe("strictInt (fallback 500): empty means default, otherwise an integer > 0 or an error", () => {
  const ok: ReadonlyArray<readonly [string | undefined, number]> = [
    [undefined, 500],
    ["", 500],
    ["   ", 500],
    ["\t\n", 500],
    ["1", 1],
    ["42", 42],
    [" 42 ", 42],
    ["+5", 5],
    ["007", 7],
    ["9007199254740991", 9007199254740991]
  ]
  it.each(ok)("%j → %d", (raw, expected) => {
    expect(strictInt(500)(raw)).toEqual(right(expected))
  })

  const bad = [
    "0",
    "+0",
    "-1",
    "-0",
    "1.5",
    "1.0",
    "1e3",
    "abc",
    "12abc",
    "0x10",
    "1_000",
    "4 2",
    "9007199254740992",
    "99999999999999999999999",
    "Infinity",
    "NaN",
    "٤٢"
  ]
  it.each(bad)("%j → error", (raw) => {
    expect(isLeft(strictInt(500)(raw))).toBe(true)
  })

  it("the error does not echo the value", () => {
    const result = strictInt(500)("12s3cr3t")
    expect(Either.isLeft(result) && !result.left.includes("s3cr3t")).toBe(true)
  })
})

describe("lenientInt (fallback 100): a bad or non-positive value falls back silently", () => {
  const cases: ReadonlyArray<readonly [string | undefined, number]> = [
    [undefined, 100],
    ["", 100],
    [" ", 100],
    ["7", 7],
    [" 7 ", 7],
    ["+5", 5],
    ["0", 100],
    ["-1", 100],
    ["1.5", 100],
    ["1e3", 100],
    ["abc", 100],
    ["0x10", 100],
    ["9007199254740992", 100],
    ["99999999999999999999999", 100]
  ]
  it.each(cases)("%j → %d", (raw, expected) => {
    expect(lenientInt(100)(raw)).toEqual(right(expected))
  })
})

describe("lenientFloat (fallback 15): a bad or non-positive value falls back silently", () => {
  const cases: ReadonlyArray<readonly [string | undefined, number]> = [
    [undefined, 15],
    ["", 15],
    ["  ", 15],
    ["2.5", 2.5],
    [" 2.5 ", 2.5],
    ["1e3", 1000],
    ["1E-1", 0.1],
    [".5", 0.5],
    ["5.", 5],
    ["+5", 5],
    ["30", 30],
    ["0", 15],
    ["0.0", 15],
    ["-1", 15],
    ["-0.5", 15],
    ["abc", 15],
    ["1.5s", 15],
    ["Infinity", 15],
    ["inf", 15],
    ["nan", 15],
    ["1e999", 15],
    ["1e-999", 15]
  ]
  it.each(cases)("%j → %d", (raw, expected) => {
    expect(lenientFloat(15)(raw)).toEqual(right(expected))
  })
})

describe("strictBool: true/false/1/0/yes/no/on/off case-insensitively, else an error", () => {
  const cases: ReadonlyArray<readonly [string | undefined, boolean, boolean]> = [
    // [raw, fallback, expected]
    [undefined, true, true],
    [undefined, false, false],
    ["", true, true],
    ["  ", false, false],
    ["true", false, true],
    ["TRUE", false, true],
    [" True ", false, true],
    ["1", false, true],
    ["yes", false, true],
    ["Yes", false, true],
    ["on", false, true],
    ["ON", false, true],
    ["false", true, false],
    ["FALSE", true, false],
    ["0", true, false],
    ["no", true, false],
    ["No", true, false],
    ["off", true, false],
    ["OFF", true, false]
  ]
  it.each(cases)("%j (fallback %s) → %s", (raw, fallback, expected) => {
    expect(strictBool(fallback)(raw)).toEqual(right(expected))
  })

  it.each(["maybe", "y", "n", "t", "f", "2", "-1", "truee", "yes!", "enabled", "tru e"])(
    "%j → error",
    (raw) => {
      expect(isLeft(strictBool(true)(raw))).toBe(true)
    }
  )

  it("the error does not echo the value", () => {
    const result = strictBool(true)("s3cr3t-value")
    expect(Either.isLeft(result) && !result.left.includes("s3cr3t")).toBe(true)
  })
})

describe("lenientBool: only 1/true/yes/on are true, anything else is false", () => {
  const cases: ReadonlyArray<readonly [string | undefined, boolean]> = [
    [undefined, false],
    ["", false],
    ["true", true],
    ["TRUE", true],
    ["Yes", true],
    ["ON", true],
    [" 1 ", true],
    ["false", false],
    ["0", false],
    ["maybe", false],
    ["2", false],
    ["y", false]
  ]
  it.each(cases)("%j → %s", (raw, expected) => {
    expect(lenientBool(false)(raw)).toEqual(right(expected))
  })

  it("an unset value takes the fallback; a set but unknown one is false even when the fallback is true", () => {
    expect(lenientBool(true)(undefined)).toEqual(right(true))
    expect(lenientBool(true)(" ")).toEqual(right(true))
    expect(lenientBool(true)("maybe")).toEqual(right(false))
  })
})

describe("text", () => {
  it("trims; empty or blank means the fallback", () => {
    expect(text("d")(undefined)).toEqual(right("d"))
    expect(text("d")("   ")).toEqual(right("d"))
    expect(text("d")("  x y  ")).toEqual(right("x y"))
  })
})

describe("globList: comma-separated, trimmed, empty entries dropped, duplicates removed, order kept", () => {
  const cases: ReadonlyArray<readonly [string | undefined, ReadonlyArray<string>]> = [
    [undefined, []],
    ["", []],
    ["   ", []],
    [",", []],
    [" , ,, ", []],
    ["*.log", ["*.log"]],
    [" *.log , internal/** ", ["*.log", "internal/**"]],
    ["b,a,b,c,a", ["b", "a", "c"]],
    ["a, a ,a", ["a"]],
    ["x,,y,", ["x", "y"]],
    ["a b,c", ["a b", "c"]]
  ]
  it.each(cases)("%j → %j", (raw, expected) => {
    expect(globList(raw)).toEqual(right(expected))
  })

  it("unique drops empty strings and keeps the first occurrence", () => {
    expect(unique(["b", "", "a", "b", ""])).toEqual(["b", "a"])
  })
})

describe("logLevel: DEBUG/INFO/WARNING/ERROR case-insensitively, anything else INFO", () => {
  const cases: ReadonlyArray<readonly [string | undefined, string]> = [
    [undefined, "INFO"],
    ["", "INFO"],
    ["debug", "DEBUG"],
    [" Debug ", "DEBUG"],
    ["INFO", "INFO"],
    ["warning", "WARNING"],
    ["error", "ERROR"],
    ["WARN", "INFO"],
    ["TRACE", "INFO"],
    ["critical", "INFO"]
  ]
  it.each(cases)("%j → %s", (raw, expected) => {
    expect(logLevel(raw)).toEqual(right(expected))
  })
})

describe("agentMode: disabled|review|workspace-write case-insensitively, unset is undefined", () => {
  it.each([
    [undefined, undefined],
    ["", undefined],
    [" ", undefined],
    ["disabled", "disabled"],
    ["Review", "review"],
    [" WORKSPACE-WRITE ", "workspace-write"]
  ] as const)("%j → %j", (raw, expected) => {
    expect(agentMode(raw)).toEqual(right(expected))
  })

  it.each(["enabled", "workspace_write", "write", "true"])("%j → error", (raw) => {
    expect(isLeft(agentMode(raw))).toBe(true)
  })
})

describe("agentRuntimes: comma list, lowercased, sorted; unknown or duplicate names are errors", () => {
  it.each([
    [undefined, []],
    ["", []],
    ["codex", ["codex"]],
    ["CODEX", ["codex"]],
    [" Claude , codex ", ["claude", "codex"]],
    ["fake,codex,claude", ["claude", "codex", "fake"]],
    ["codex,,", ["codex"]]
  ] as const)("%j → %j", (raw, expected) => {
    expect(agentRuntimes(raw)).toEqual(right(expected))
  })

  it.each(["qoder", "gpt", "codex,codex", "codex,CODEX", "claude, claude "])("%j → error", (raw) => {
    const result = agentRuntimes(raw)
    expect(isLeft(result)).toBe(true)
  })

  it("the unknown-runtime error does not echo the value", () => {
    const result = agentRuntimes("codex,s3cr3t-runtime")
    expect(Either.isLeft(result) && !result.left.includes("s3cr3t")).toBe(true)
  })
})
