/**
 * Shell-pattern matching with Python `fnmatch.fnmatchcase` semantics, the semantics the
 * reference uses for deny globs and find_files patterns:
 *
 * - `*` matches any run of characters (including "/", which only matters for full-path globs),
 * - `?` matches exactly one character (a code point, never half a surrogate pair),
 * - `[seq]` / `[!seq]` match one character in / not in the set, with `a-z` ranges; a reversed
 *   range (`z-a`) matches nothing, `]` first in a set is a member, a `-` first or last is literal,
 * - an unclosed `[` is a literal "[", and a backslash is an ordinary character (no escaping).
 *
 * Matching is case-sensitive (the built-in credential rules fold the name first, DenyPolicy).
 *
 * The pattern is compiled once into a token list and matched by the classic greedy algorithm
 * that remembers only the LAST star: no regular expression is ever built from the pattern, so a
 * caller's pattern cannot cause backtracking blow-up (`*?*?*?…Z` was exponential as a RegExp).
 * When a later piece fails, only the last star's start moves, one character at a time, and
 * stars are never revisited once a later star is reached: at most (n + 1) restarts, each
 * scanning at most the pattern, so a match costs O(n × m) for a name of n and a pattern of m
 * characters (O(m) to compile), whatever the input.
 */

const STAR = 0
const ANY = 1
const LITERAL = 2
const SET = 3

type Token =
  | { readonly kind: typeof STAR }
  | { readonly kind: typeof ANY }
  | { readonly kind: typeof LITERAL; readonly cp: number }
  /** Inclusive code-point ranges as [lo0, hi0, lo1, hi1, …]. */
  | { readonly kind: typeof SET; readonly negate: boolean; readonly ranges: Int32Array }

export interface CompiledPattern {
  readonly tokens: ReadonlyArray<Token>
  /** Characters a name needs at least (the tokens other than stars). */
  readonly fixed: number
  readonly hasStar: boolean
}

/** The code points of a string (a lone surrogate counts as one, as in a `u` RegExp). */
const codePoints = (text: string): number[] => {
  const out: number[] = []
  for (const ch of text) out.push(ch.codePointAt(0)!)
  return out
}

const compileSet = (body: ReadonlyArray<number>): Token => {
  // body is the text between "[" and "]", with a leading "!" meaning negation.
  const negate = body[0] === 0x21
  const chars = negate ? body.slice(1) : body
  const ranges: number[] = []
  const add = (lo: number, hi: number) => ranges.push(lo, hi)
  for (let i = 0; i < chars.length; i++) {
    const here = chars[i]!
    if (chars[i + 1] === 0x2d && i + 2 < chars.length) {
      const end = chars[i + 2]!
      // Python drops reversed ranges (they can match nothing).
      if (here <= end) add(here, end)
      i += 2
    } else {
      add(here, here)
    }
  }
  return { kind: SET, negate, ranges: Int32Array.from(ranges) }
}

/** The token list of a pattern (linear in its length). */
export const compilePattern = (pattern: string): CompiledPattern => {
  const raw = codePoints(pattern)
  const tokens: Token[] = []
  let fixed = 0
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c === 0x2a) {
      // A run of stars is one star (same language, fewer restarts).
      if (tokens.at(-1)?.kind !== STAR) tokens.push({ kind: STAR })
      continue
    }
    fixed++
    if (c === 0x3f) {
      tokens.push({ kind: ANY })
    } else if (c === 0x5b) {
      let j = i + 1
      if (raw[j] === 0x21) j++
      if (raw[j] === 0x5d) j++
      while (j < raw.length && raw[j] !== 0x5d) j++
      if (j >= raw.length) {
        tokens.push({ kind: LITERAL, cp: c }) // unclosed: a literal "["
      } else {
        tokens.push(compileSet(raw.slice(i + 1, j)))
        i = j
      }
    } else {
      tokens.push({ kind: LITERAL, cp: c })
    }
  }
  return { tokens, fixed, hasStar: fixed < tokens.length }
}

const inSet = (ranges: Int32Array, cp: number): boolean => {
  for (let r = 0; r < ranges.length; r += 2) if (cp >= ranges[r]! && cp <= ranges[r + 1]!) return true
  return false
}

/** Does the single-character token `token` (not a star) accept `cp`? */
const accepts = (token: Token, cp: number): boolean => {
  switch (token.kind) {
    case ANY:
      return true
    case LITERAL:
      return token.cp === cp
    case SET:
      return inSet(token.ranges, cp) !== token.negate
    default:
      return false
  }
}

/** Match a whole name against a compiled pattern in O(len(name) × len(pattern)). */
export const matchCompiled = (compiled: CompiledPattern, name: string): boolean => {
  const { tokens } = compiled
  const text = codePoints(name)
  const n = text.length
  // Cheap refusals: every non-star token consumes exactly one character.
  if (n < compiled.fixed || (!compiled.hasStar && n !== compiled.fixed)) return false
  const m = tokens.length
  let p = 0
  let s = 0
  let starAt = -1 // index of the last star seen
  let starFrom = 0 // where the name text it currently absorbs ends
  while (s < n) {
    const token = tokens[p]
    if (token !== undefined && token.kind === STAR) {
      starAt = p++
      starFrom = s
    } else if (token !== undefined && accepts(token, text[s]!)) {
      p++
      s++
    } else if (starAt >= 0) {
      // The last star absorbs one more character; everything after it is matched again.
      p = starAt + 1
      s = ++starFrom
    } else {
      return false
    }
  }
  while (p < m && tokens[p]!.kind === STAR) p++
  return p === m
}

/** Compiled patterns by text, bounded (caller patterns are bounded in length by the schema). */
const cache = new Map<string, CompiledPattern>()
const MAX_CACHE = 1024

/** The compiled form of a case-sensitive pattern, cached. */
export const compile = (pattern: string): CompiledPattern => {
  let compiled = cache.get(pattern)
  if (compiled === undefined) {
    compiled = compilePattern(pattern)
    if (cache.size >= MAX_CACHE) cache.clear()
    cache.set(pattern, compiled)
  }
  return compiled
}

/** Python's `fnmatch.fnmatchcase(name, pattern)`. */
export const fnmatch = (name: string, pattern: string): boolean => matchCompiled(compile(pattern), name)

/** A matcher compiled once; a pattern without `*`, `?` or `[` is a plain comparison. */
export const matcher = (pattern: string): ((name: string) => boolean) => {
  if (!pattern.includes("*") && !pattern.includes("?") && !pattern.includes("[")) {
    return (name) => name === pattern
  }
  const compiled = compilePattern(pattern)
  return (name) => matchCompiled(compiled, name)
}
