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

interface CharSet {
  readonly negate: boolean
  /** Inclusive code-point ranges as [lo0, hi0, lo1, hi1, …]. */
  readonly ranges: Int32Array
}

/**
 * A pattern as parallel arrays (no object per token, so matching allocates nothing): token i is
 * `kinds[i]`; its `values[i]` is the code point of a LITERAL or the index in `sets` of a SET.
 */
export interface CompiledPattern {
  readonly kinds: Uint8Array
  readonly values: Int32Array
  readonly sets: ReadonlyArray<CharSet>
  /** Characters a name needs at least (the tokens other than stars). */
  readonly fixed: number
  /** Index of the last star, -1 if none. */
  readonly lastStar: number
}

/** The code points of a string (a lone surrogate counts as one, as in a `u` RegExp). */
const codePoints = (text: string): number[] => {
  const out: number[] = []
  for (const ch of text) out.push(ch.codePointAt(0)!)
  return out
}

const compileSet = (body: ReadonlyArray<number>, caret: boolean): CharSet => {
  // body is the text between "[" and "]", with a leading "!" (or "^", for path globs) meaning
  // negation.
  const negate = isNegation(body[0], caret)
  const chars = negate ? body.slice(1) : body
  const ranges: number[] = []
  for (let i = 0; i < chars.length; i++) {
    const here = chars[i]!
    if (chars[i + 1] === 0x2d && i + 2 < chars.length) {
      const end = chars[i + 2]!
      // Python drops reversed ranges (they can match nothing).
      if (here <= end) ranges.push(here, end)
      i += 2
    } else {
      ranges.push(here, here)
    }
  }
  return { negate, ranges: Int32Array.from(ranges) }
}

const isNegation = (c: number | undefined, caret: boolean): boolean => c === 0x21 || (caret && c === 0x5e)

export interface CompileOptions {
  /**
   * `[^…]` negates like `[!…]` (git's wildmatch, used by find_files path globs). Python's
   * fnmatch, the semantics of deny globs and base-name patterns, reads `^` as a member.
   */
  readonly caretNegates?: boolean
}

/** The token list of a pattern (linear in its length). */
export const compilePattern = (pattern: string, options?: CompileOptions): CompiledPattern => {
  const caret = options?.caretNegates === true
  const raw = codePoints(pattern)
  const kinds: number[] = []
  const values: number[] = []
  const sets: CharSet[] = []
  let fixed = 0
  const push = (kind: number, value: number) => {
    kinds.push(kind)
    values.push(value)
  }
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c === 0x2a) {
      // A run of stars is one star (same language, fewer restarts).
      if (kinds.at(-1) !== STAR) push(STAR, 0)
      continue
    }
    fixed++
    if (c === 0x3f) {
      push(ANY, 0)
    } else if (c === 0x5b) {
      let j = i + 1
      if (isNegation(raw[j], caret)) j++
      if (raw[j] === 0x5d) j++
      while (j < raw.length && raw[j] !== 0x5d) j++
      if (j >= raw.length) {
        push(LITERAL, c) // unclosed: a literal "["
      } else {
        push(SET, sets.length)
        sets.push(compileSet(raw.slice(i + 1, j), caret))
        i = j
      }
    } else {
      push(LITERAL, c)
    }
  }
  return {
    kinds: Uint8Array.from(kinds),
    values: Int32Array.from(values),
    sets,
    fixed,
    lastStar: kinds.lastIndexOf(STAR)
  }
}

const accepts = (compiled: CompiledPattern, p: number, cp: number): boolean => {
  switch (compiled.kinds[p]) {
    case ANY:
      return true
    case LITERAL:
      return compiled.values[p] === cp
    case SET: {
      const set = compiled.sets[compiled.values[p]!]!
      const { ranges } = set
      for (let r = 0; r < ranges.length; r += 2) {
        if (cp >= ranges[r]! && cp <= ranges[r + 1]!) return !set.negate
      }
      return set.negate
    }
    default:
      return false
  }
}

/** Where the code point that ends just before `end` starts (a well-formed pair is one). */
const previousStart = (name: string, end: number): number => {
  const unit = name.charCodeAt(end - 1)
  if (unit >= 0xdc00 && unit <= 0xdfff && end >= 2) {
    const high = name.charCodeAt(end - 2)
    if (high >= 0xd800 && high <= 0xdbff) return end - 2
  }
  return end - 1
}

/**
 * Match a whole name against a compiled pattern in O(len(name) × len(pattern)). The name is
 * walked by code point in place (`codePointAt`; a lone surrogate is one character).
 *
 * The tokens after the last star match a fixed number of characters, so they are checked
 * first against the end of the name (most names are refused there, at once); the rest, which
 * ends with that star, only has to match a prefix of what is left.
 */
export const matchCompiled = (compiled: CompiledPattern, name: string): boolean => {
  const { kinds, lastStar } = compiled
  // Cheap refusal: every non-star token consumes one code point, i.e. one or two code units.
  if (name.length < compiled.fixed) return false
  let limit = name.length
  for (let q = kinds.length - 1; q > lastStar; q--) {
    if (limit === 0) return false
    const start = previousStart(name, limit)
    if (!accepts(compiled, q, name.codePointAt(start)!)) return false
    limit = start
  }
  if (lastStar < 0) return limit === 0
  let p = 0
  let s = 0
  let starAt = -1 // index of the last star seen
  let starFrom = 0 // where the name text it currently absorbs ends
  while (s < limit) {
    if (kinds[p] === STAR) {
      if (p === lastStar) return true // it absorbs the rest
      starAt = p++
      starFrom = s
      continue
    }
    const cp = name.codePointAt(s)!
    if (accepts(compiled, p, cp)) {
      p++
      s += cp > 0xffff ? 2 : 1
    } else if (starAt >= 0) {
      // The last star absorbs one more character; everything after it is matched again.
      p = starAt + 1
      starFrom += name.codePointAt(starFrom)! > 0xffff ? 2 : 1
      s = starFrom
    } else {
      return false
    }
  }
  // The prefix is used up: only stars may remain, up to the last one.
  while (p < lastStar && kinds[p] === STAR) p++
  return p === lastStar
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
