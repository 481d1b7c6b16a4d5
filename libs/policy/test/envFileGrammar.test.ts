/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal text "${" is what these .env cases are about */
/**
 * The strict .env grammar (EnvFile.ts): a table of accepted and refused files, and properties
 * checking that no file is accepted while a variable is dropped or altered.
 */
import { describe, expect, it } from "@effect/vitest"
import { ENV_FILE_MAX_BYTES, type EnvFileProblem, parseEnvFile } from "@serverfs/policy"
import { Either, FastCheck as fc } from "effect"

const parse = (text: string | Uint8Array) =>
  parseEnvFile(typeof text === "string" ? Buffer.from(text, "utf8") : text)

const accepted = (text: string | Uint8Array): Record<string, string> => {
  const result = parse(text)
  if (Either.isLeft(result)) {
    throw new Error(`unexpected refusal: line ${result.left.line}: ${result.left.problem}`)
  }
  return Object.fromEntries(result.right)
}

const refused = (text: string | Uint8Array): EnvFileProblem => {
  const result = parse(text)
  if (Either.isRight(result)) throw new Error(`expected a refusal, got ${JSON.stringify([...result.right])}`)
  return result.left
}

describe("accepted files", () => {
  const cases: ReadonlyArray<readonly [string, string, Record<string, string>]> = [
    ["empty file", "", {}],
    ["blank and comment lines", "\n   \n\t\n# c\n  # indented comment\n", {}],
    ["plain entry", "A=1\n", { A: "1" }],
    ["no final newline", "A=1", { A: "1" }],
    ["empty value", "A=\n", { A: "" }],
    ["export prefix", "export A=1\nexport\tB=2\n", { A: "1", B: "2" }],
    ["a variable named export", "export=1\n", { export: "1" }],
    ["leading blanks before the name", "  A=1\n", { A: "1" }],
    ["unquoted value is trimmed", "A=  two words \t\n", { A: "two words" }],
    ["inline comment after a blank", "A=kept # comment\n", { A: "kept" }],
    ["# not after a blank is data", "A=a#b\nB=#x\n", { A: "a#b", B: "#x" }],
    ["blank then # right after = is an empty value", "A= #x\n", { A: "" }],
    ["= and backslash in an unquoted value", "A=x=y\\z\n", { A: "x=y\\z" }],
    ["lone $ unquoted", "A=$HOME\n", { A: "$HOME" }],
    ["single quotes are literal", "A='a \\n ${X} \" #'\n", { A: 'a \\n ${X} " #' }],
    ["double quotes with escapes", 'A="a\\\\b\\"c\\$d\\ne\\tf"\n', { A: 'a\\b"c$d\ne\tf' }],
    ["double-quoted # and '", "A=\"x # y 'z'\"\n", { A: "x # y 'z'" }],
    ["comment after a closing quote", "A='x' # c\nB=\"y\"\t#c\nC='z'  \n", { A: "x", B: "y", C: "z" }],
    ["blanks before the opening quote", "A=   'x'\n", { A: "x" }],
    ["CRLF line endings", "A=1\r\nB='2'\r\n\r\n# c\r\n", { A: "1", B: "2" }],
    ["CR before the end of the file", "A=1\r", { A: "1" }],
    ["UTF-8 byte order mark at the start", "\uFEFFA=1\n", { A: "1" }],
    ["non-ASCII values", "A=é\nB='日本'\nC=\"😀\"\n", { A: "é", B: "日本", C: "😀" }],
    ["tab inside a value", "A=a\tb\n", { A: "a\tb" }]
  ]
  it.each(cases)("%s", (_, text, expected) => {
    expect(accepted(text)).toEqual(expected)
  })
})

describe("refused files name the line, never its text", () => {
  const cases: ReadonlyArray<readonly [string, string, number, string]> = [
    ["a stray line before a deny glob", "secret-token\nSERVERFS_EXTRA_DENY_GLOBS=normal.txt\n", 1, 'no "="'],
    ["export without =", "A=1\nexport B\n", 2, 'no "="'],
    ["a blank before =", "A =1\n", 1, "not a NAME=value line"],
    ["an invalid name", "1A=x\n", 1, "name is invalid"],
    ["a dash in the name", "A-B=x\n", 1, "not a NAME=value line"],
    ["no name", "=x\n", 1, "name is invalid"],
    ["an unterminated double quote", 'A="abc\nB=1\n', 1, "not closed on this line"],
    ["an unterminated single quote", "A=1\nB='abc\nC=1'\n", 2, "not closed on this line"],
    ["a multi-line double-quoted value", 'A="line one\nline two"\n', 1, "not closed"],
    ["text after a closing quote", "A='x'y\n", 1, "after the closing quote"],
    ["a comment glued to a closing quote", 'A="x"#c\n', 1, "after the closing quote"],
    ["a second quoted part", "A='x' 'y'\n", 1, "after the closing quote"],
    ["a quote inside an unquoted value", "A=it's\n", 1, "quote inside an unquoted value"],
    ["a late quote", 'A=x "y"\n', 1, "quote inside an unquoted value"],
    ["an unknown escape", 'A="a\\qb"\n', 1, "unsupported escape"],
    ["a trailing backslash in double quotes", 'A="a\\"\n', 1, "not closed"],
    ["${ unquoted", "A=${HOME}/x\n", 1, "not expanded"],
    ["${ double-quoted", 'A="${HOME}"\n', 1, "not expanded"],
    ["a NUL", "A=a\0b\n", 1, "control character"],
    ["a NUL line", "A=1\n\0\n", 2, "control character"],
    ["a stray CR inside a line", "A=a\rb\n", 1, "control character"],
    ["CR-only line endings", "A=1\rB=2\r", 1, "control character"],
    ["two CRs before LF", "A=1\r\r\n", 1, "control character"],
    ["a duplicate name", "A=1\nB=2\nA=1\n", 3, "A is set again (first on line 1)"],
    ["a duplicate through export", "A=1\nexport A=2\n", 2, "set again"],
    ["a BOM that is not at the start", "A=1\n\uFEFFB=2\n", 2, "not a NAME=value line"]
  ]
  it.each(cases)("%s", (_, text, line, phrase) => {
    const problem = refused(text)
    expect(problem.line).toBe(line)
    expect(problem.problem).toContain(phrase)
    for (const secret of ["secret-token", "abc", "HOME", "it's", "normal.txt"]) {
      expect(problem.problem).not.toContain(secret)
    }
  })

  it("invalid UTF-8 → refused at its line", () => {
    const bytes = Buffer.concat([Buffer.from("A=1\nB="), Buffer.from([0xc3, 0x28]), Buffer.from("\n")])
    expect(refused(bytes)).toEqual({ line: 2, problem: "is not valid UTF-8" })
  })

  it("a file over the size limit → refused as a whole, before parsing", () => {
    const big = Buffer.alloc(ENV_FILE_MAX_BYTES + 1, "#")
    expect(refused(big).line).toBe(0)
    expect(accepted(Buffer.alloc(ENV_FILE_MAX_BYTES, "#"))).toEqual({})
  })

  it("a file of the maximum size with hostile lines is parsed in well under a second", () => {
    const comments = `${"#".repeat(ENV_FILE_MAX_BYTES - 2010)}\nA="${"\\\\".repeat(500)}"\nB=${" ".repeat(990)}x`
    expect(Buffer.byteLength(comments)).toBeLessThanOrEqual(ENV_FILE_MAX_BYTES)
    const started = performance.now()
    expect(accepted(comments)).toEqual({ A: "\\".repeat(500), B: "x" })
    const unquoted = `A=${"a #".repeat(ENV_FILE_MAX_BYTES / 3 - 2)}`
    expect(accepted(unquoted)).toEqual({ A: "a" })
    const doubleQuoted = `A="${"\\n".repeat(ENV_FILE_MAX_BYTES / 2 - 4)}"`
    expect(accepted(doubleQuoted).A).toHaveLength(ENV_FILE_MAX_BYTES / 2 - 4)
    // A liveness bound, not a benchmark: quadratic work on 1 MiB would take minutes.
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/**
 * An independent reading of the grammar in docs/configuration.md, written with whole-line regular
 * expressions instead of a scanner. Fixed patterns over test data only.
 */
const reference = (text: string): Record<string, string> | undefined => {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text
  const lines = body.split("\n")
  if (lines.at(-1) === "") lines.pop()
  const out: Record<string, string> = {}
  for (const raw of lines) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if ([...line].some((c) => (c < " " && c !== "\t") || c === "\x7f")) return undefined
    if (/^[ \t]*(#.*)?$/.test(line)) continue
    const entry = /^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (entry === null) return undefined
    const [, name, rest] = entry as unknown as [string, string, string]
    const trimmed = rest.replace(/^[ \t]+/, "")
    let value: string
    const single = /^'([^']*)'(?:[ \t]*|[ \t]+#.*)$/.exec(trimmed)
    const double = /^"((?:[^"\\$]|\$(?!\{)|\\[\\"$nt])*)"(?:[ \t]*|[ \t]+#.*)$/.exec(trimmed)
    if (trimmed.startsWith("'")) {
      if (single === null) return undefined
      value = single[1]!
    } else if (trimmed.startsWith('"')) {
      if (double === null) return undefined
      value = double[1]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c))
    } else {
      const comment = /[ \t]#/.exec(rest)
      value = (comment === null ? rest : rest.slice(0, comment.index)).replace(/^[ \t]+|[ \t]+$/g, "")
      if (/['"]|\$\{/.test(value)) return undefined
    }
    if (Object.hasOwn(out, name)) return undefined
    out[name] = value
  }
  return out
}

const nameArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/)
/** Characters that stress every rule: blanks, quotes, #, $, {, \, =, newline, non-ASCII. */
const valueArb = fc.string({
  unit: fc.constantFrom("a", "Z", "0", " ", "\t", "#", "'", '"', "$", "{", "}", "\\", "=", "\n", "é", "😀"),
  maxLength: 12
})
const entriesArb = fc.uniqueArray(fc.tuple(nameArb, valueArb), {
  selector: ([name]) => name,
  maxLength: 8
})

type Style = "unquoted" | "single" | "double"

/** The value written in a style, or undefined when that style cannot represent it. */
const render = (value: string, style: Style): string | undefined => {
  switch (style) {
    case "unquoted":
      // Not representable unquoted: edge blanks (trimmed), a comment start, quotes, "${".
      return /^[ \t#]|[ \t]$|[ \t]#|['"\n]|\$\{/.test(value) ? undefined : value
    case "single":
      return /['\n]/.test(value) ? undefined : `'${value}'`
    case "double":
      return `"${value.replace(/[\\"$\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`))}"`
  }
}

interface Decor {
  readonly style: Style
  readonly exported: boolean
  readonly indent: string
  readonly afterEquals: string
  readonly comment: string
  readonly crlf: boolean
}

const decorArb: fc.Arbitrary<Decor> = fc.record({
  style: fc.constantFrom<Style>("unquoted", "single", "double"),
  exported: fc.boolean(),
  indent: fc.constantFrom("", " ", "\t "),
  afterEquals: fc.constantFrom("", " ", "\t"),
  comment: fc.constantFrom("", " # note", "\t#", "  # a=b 'c' \"d"),
  crlf: fc.boolean()
})

const renderEntry = (name: string, value: string, d: Decor): string => {
  const written = render(value, d.style) ?? render(value, "double")!
  // An unquoted empty value followed by a blank and a comment is still empty: fine.
  return `${d.indent}${d.exported ? "export " : ""}${name}=${d.afterEquals}${written}${d.comment}${d.crlf ? "\r" : ""}`
}

const fileArb = fc
  .tuple(entriesArb, fc.array(decorArb, { minLength: 8, maxLength: 8 }), fc.boolean())
  .map(([entries, decors, bom]) => {
    const lines = entries.map(([name, value], i) => renderEntry(name, value, decors[i]!))
    return { entries, lines, bom }
  })

const junkLineArb = fc.oneof(
  fc.string({
    unit: fc.constantFrom("a", "=", " ", "#", "'", '"', "\\", "$", "{", "\r", "\0", "_", "1"),
    maxLength: 10
  }),
  fc.constantFrom(
    "stray",
    "export",
    "export X",
    "X",
    "'",
    '"',
    "# ok",
    "",
    "=",
    "A B=1",
    "\uFEFF",
    "B=${A}",
    "C='${A}'"
  )
)

type Mutation =
  | { readonly kind: "insert-line"; readonly at: number; readonly line: string }
  | { readonly kind: "insert-char"; readonly at: number; readonly offset: number; readonly char: string }
  | { readonly kind: "delete-char"; readonly at: number; readonly offset: number }
  | { readonly kind: "duplicate-line"; readonly at: number }

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("insert-line" as const), at: fc.nat(), line: junkLineArb }),
  fc.record({
    kind: fc.constant("insert-char" as const),
    at: fc.nat(),
    offset: fc.nat(),
    char: fc.constantFrom("'", '"', "=", "#", " ", "\\", "\0", "\r", "\n", "$", "${", "x")
  }),
  fc.record({ kind: fc.constant("delete-char" as const), at: fc.nat(), offset: fc.nat() }),
  fc.record({ kind: fc.constant("duplicate-line" as const), at: fc.nat() })
)

const mutate = (lines: ReadonlyArray<string>, m: Mutation): string[] => {
  const out = [...lines]
  const at = out.length === 0 ? 0 : m.at % out.length
  switch (m.kind) {
    case "insert-line":
      out.splice(m.at % (out.length + 1), 0, m.line)
      return out
    case "duplicate-line":
      if (out.length > 0) out.splice(at, 0, out[at]!)
      return out
    // Offsets count code points: splitting a surrogate pair would test the UTF-8 encoder.
    case "insert-char": {
      const line = [...(out[at] ?? "")]
      line.splice(m.offset % (line.length + 1), 0, m.char)
      out[at] = line.join("")
      return out
    }
    case "delete-char": {
      const line = [...(out[at] ?? "")]
      if (line.length === 0) return out
      line.splice(m.offset % line.length, 1)
      out[at] = line.join("")
      return out
    }
  }
}

const join = (lines: ReadonlyArray<string>, bom: boolean) => (bom ? "\uFEFF" : "") + lines.join("\n")

describe("properties", () => {
  it.prop("every valid rendering of a set of entries reads back exactly that set", [fileArb], ([file]) => {
    const text = join(file.lines, file.bom)
    expect(accepted(text)).toEqual(Object.fromEntries(file.entries))
    expect(reference(text)).toEqual(Object.fromEntries(file.entries))
  })

  it.prop(
    "a mutated file is refused, or read exactly as the independent reference reads it",
    [fileArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 })],
    ([file, mutations]) => {
      const lines = mutations.reduce<string[]>((acc, m) => mutate(acc, m), [...file.lines])
      const text = join(lines, file.bom)
      const result = parse(text)
      const expected = reference(text)
      if (Either.isLeft(result)) {
        expect(expected).toBeUndefined()
      } else {
        expect(Object.fromEntries(result.right)).toEqual(expected)
      }
    },
    { fastCheck: { numRuns: 3000 } }
  )

  it.prop(
    "junk lines never drop or alter a valid entry: refused, or every entry is there unchanged",
    [fileArb, fc.array(fc.tuple(fc.nat(), junkLineArb), { minLength: 1, maxLength: 4 })],
    ([file, junk]) => {
      const lines = [...file.lines]
      for (const [at, line] of junk) lines.splice(at % (lines.length + 1), 0, line)
      const result = parse(join(lines, file.bom))
      if (Either.isRight(result)) {
        for (const [name, value] of file.entries) expect(result.right.get(name)).toBe(value)
      }
    },
    { fastCheck: { numRuns: 3000 } }
  )

  it.prop(
    "arbitrary bytes never throw: an answer or a line-numbered refusal",
    [fc.uint8Array({ maxLength: 200 })],
    ([bytes]) => {
      const result = parseEnvFile(bytes)
      if (Either.isLeft(result)) expect(result.left.line).toBeGreaterThanOrEqual(1)
    }
  )
})
