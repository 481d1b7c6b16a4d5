import { Either } from "effect"

/**
 * The strict grammar of the file named by SERVERFS_ENV_FILE (documented in docs/configuration.md,
 * "The .env file"). Every line is exactly one of:
 *
 * - blank (spaces and tabs only) or a comment (first non-blank character `#`): ignored;
 * - an entry: optional blanks, an optional `export` followed by blanks, a name
 *   `[A-Za-z_][A-Za-z0-9_]*`, `=` directly after the name, optional blanks, then a value:
 *   - `'…'` single-quoted: taken literally, must close on the same line;
 *   - `"…"` double-quoted: escapes `\\` `\"` `\$` `\n` `\t` only, must close on the same line;
 *   - unquoted: the text up to a `#` that follows a blank (an inline comment) or the end of the
 *     line, with blanks trimmed at both ends; it may not contain a quote character.
 *   After a closing quote only blanks may follow, optionally then a `#` comment.
 *
 * Anything else stops startup with the 1-based line number: a line without `=`, an invalid name,
 * an unterminated quote (values never span lines), text after a closing quote, an unknown escape,
 * `${` outside single quotes (other .env readers expand it; ServerFS would not, so the value
 * would silently differ), a control character (NUL, a stray carriage return), invalid UTF-8, a
 * name set twice. One trailing CR per line (CRLF files) and a UTF-8 byte order mark at the very
 * start are accepted. The reason the grammar is strict: python-dotenv and Node's parser both
 * recover from a malformed line by guessing, and a guess once swallowed the name of the next
 * line's SERVERFS_EXTRA_DENY_GLOBS, so the deny rule silently vanished.
 *
 * Problems name the line and what is wrong with it, never the text: a value may be a secret, and
 * a malformed line may be one too.
 */
export interface EnvFileProblem {
  /** 1-based; 0 for a problem with the file as a whole. */
  readonly line: number
  readonly problem: string
}

/** The entries in file order; names are unique. */
export type EnvFileEntries = ReadonlyMap<string, string>

/** Beyond this the file is refused before parsing: an operator file is a few kilobytes. */
export const ENV_FILE_MAX_BYTES = 1024 * 1024

const BOM = [0xef, 0xbb, 0xbf] as const
const LF = 0x0a
const CR = 0x0d

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const isBlank = (c: string | undefined): boolean => c === " " || c === "\t"
const isNameStart = (c: string): boolean => (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || c === "_"
const isNameChar = (c: string): boolean => isNameStart(c) || (c >= "0" && c <= "9")

/** C0 controls except tab, and DEL. */
const hasControlCharacter = (line: string): boolean => {
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true
  }
  return false
}

class LineProblem {
  constructor(readonly problem: string) {}
}

const refuse = (problem: string): never => {
  throw new LineProblem(problem)
}

/** After a closing quote: blanks, then optionally a comment that starts after a blank. */
const checkAfterQuote = (line: string, from: number): void => {
  let i = from
  while (isBlank(line[i])) i++
  if (i === line.length) return
  if (line[i] === "#" && i > from) return
  refuse("unexpected text after the closing quote")
}

const DOUBLE_QUOTE_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  '"': '"',
  $: "$",
  n: "\n",
  t: "\t"
}

const singleQuoted = (line: string, open: number): string => {
  const close = line.indexOf("'", open + 1)
  if (close < 0) refuse("the single-quoted value is not closed on this line (values cannot span lines)")
  checkAfterQuote(line, close + 1)
  return line.slice(open + 1, close)
}

const doubleQuoted = (line: string, open: number): string => {
  let value = ""
  let i = open + 1
  for (;;) {
    const c = line[i]
    if (c === undefined) {
      return refuse("the double-quoted value is not closed on this line (values cannot span lines)")
    }
    if (c === '"') break
    if (c === "\\") {
      const escaped = DOUBLE_QUOTE_ESCAPES[line[i + 1] ?? ""]
      if (escaped === undefined) {
        refuse('unsupported escape in a double-quoted value (allowed: \\\\ \\" \\$ \\n \\t)')
      }
      value += escaped
      i += 2
      continue
    }
    if (c === "$" && line[i + 1] === "{") {
      refuse('"${" is not expanded by ServerFS; write \\${ in double quotes, or use single quotes')
    }
    value += c
    i++
  }
  checkAfterQuote(line, i + 1)
  return value
}

const unquoted = (line: string, from: number): string => {
  let end = line.length
  for (let i = from; i < line.length; i++) {
    if (line[i] === "#" && isBlank(line[i - 1])) {
      end = i
      break
    }
  }
  const value = line.slice(from, end).trim()
  if (value.includes('"') || value.includes("'")) {
    refuse("a quote inside an unquoted value; quote the whole value")
  }
  if (value.includes("${")) {
    refuse('"${" is not expanded by ServerFS; write \\${ in double quotes, or use single quotes')
  }
  return value
}

/** One line: undefined for a blank or comment line, otherwise the entry. */
const parseLine = (line: string): readonly [string, string] | undefined => {
  if (hasControlCharacter(line)) {
    refuse("contains a control character (for example NUL or a carriage return inside the line)")
  }
  let i = 0
  while (isBlank(line[i])) i++
  if (i === line.length || line[i] === "#") return undefined
  if (line.startsWith("export", i) && isBlank(line[i + 6])) {
    i += 6
    while (isBlank(line[i])) i++
  }
  const nameStart = i
  while (i < line.length && isNameChar(line[i]!)) i++
  const name = line.slice(nameStart, i)
  if (line[i] !== "=") {
    // The text is never repeated: a stray line may be a pasted secret.
    if (line.includes("=")) refuse('not a NAME=value line (the name is invalid or not directly before "=")')
    refuse('not a NAME=value line (no "=")')
  }
  if (name === "" || !isNameStart(name[0]!)) refuse("the variable name is invalid")
  i++
  // The comment rule of unquoted values sees the blanks right after "=" (`A= #c` is empty).
  const valueStart = i
  while (isBlank(line[i])) i++
  const value =
    line[i] === "'"
      ? singleQuoted(line, i)
      : line[i] === '"'
        ? doubleQuoted(line, i)
        : unquoted(line, valueStart)
  return [name, value]
}

/**
 * The entries of an env file and every problem, in line order (`serverfs config check` lists them
 * all). A bad line contributes no entry; a name set again keeps its first value. Work is linear in
 * the file size, which the caller bounds with ENV_FILE_MAX_BYTES.
 */
export const parseEnvFileAll = (
  bytes: Uint8Array
): { readonly entries: EnvFileEntries; readonly problems: ReadonlyArray<EnvFileProblem> } => {
  const entries = new Map<string, string>()
  const problems: Array<EnvFileProblem> = []
  if (bytes.length > ENV_FILE_MAX_BYTES) {
    return {
      entries,
      problems: [{ line: 0, problem: `the file is larger than ${ENV_FILE_MAX_BYTES} bytes` }]
    }
  }
  const lineOf = new Map<string, number>()
  let start = bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? 3 : 0
  let lineNumber = 0
  while (start < bytes.length) {
    lineNumber++
    let end = bytes.indexOf(LF, start)
    if (end < 0) end = bytes.length
    const next = end + 1
    // CRLF: one CR right before the LF (or before the end of the file) belongs to the line break.
    if (end > start && bytes[end - 1] === CR) end--
    // Splitting at LF first is safe in UTF-8: 0x0A never occurs inside a multi-byte sequence.
    const bytesOfLine = bytes.subarray(start, end)
    start = next
    let line: string
    try {
      line = decoder.decode(bytesOfLine)
    } catch {
      problems.push({ line: lineNumber, problem: "is not valid UTF-8" })
      continue
    }
    let entry: readonly [string, string] | undefined
    try {
      entry = parseLine(line)
    } catch (e) {
      if (!(e instanceof LineProblem)) throw e
      problems.push({ line: lineNumber, problem: e.problem })
      continue
    }
    if (entry === undefined) continue
    const [name, value] = entry
    const first = lineOf.get(name)
    if (first !== undefined) {
      problems.push({ line: lineNumber, problem: `${name} is set again (first on line ${first})` })
      continue
    }
    lineOf.set(name, lineNumber)
    entries.set(name, value)
  }
  return { entries, problems }
}

/** The entries of an env file, or its first problem (what stops a server). */
export const parseEnvFile = (bytes: Uint8Array): Either.Either<EnvFileEntries, EnvFileProblem> => {
  const { entries, problems } = parseEnvFileAll(bytes)
  const first = problems[0]
  return first === undefined ? Either.right(entries) : Either.left(first)
}

/** The text of a ConfigurationError about the file: `line 4: not a NAME=value line (no "=")`. */
export const envFileProblemText = (p: EnvFileProblem): string =>
  p.line === 0 ? p.problem : `line ${p.line}: ${p.problem}`
