/**
 * Case-sensitive shell-pattern matching with Python `fnmatch.fnmatchcase` semantics, the
 * semantics the reference uses for deny globs and find_files patterns:
 *
 * - `*` matches any run of characters (including "/", which only matters for full-path globs),
 * - `?` matches exactly one character (a code point, never half a surrogate pair),
 * - `[seq]` / `[!seq]` match one character in / not in the set, with `a-z` ranges,
 * - an unclosed `[` is a literal "[", and a backslash is an ordinary character (no escaping).
 */
const cache = new Map<string, RegExp>()
const MAX_CACHE = 1024

const codePointEscape = (cp: number): string => `\\u{${cp.toString(16)}}`

const translateClass = (body: string): string => {
  // body is the text between "[" and "]", with a leading "!" meaning negation.
  const negate = body.startsWith("!")
  const chars = Array.from(negate ? body.slice(1) : body)
  const parts: string[] = []
  for (let i = 0; i < chars.length; i++) {
    const here = chars[i]!
    const dash = chars[i + 1]
    const end = chars[i + 2]
    if (dash === "-" && end !== undefined) {
      const lo = here.codePointAt(0)!
      const hi = end.codePointAt(0)!
      // Python drops reversed ranges (they can match nothing).
      if (lo <= hi) parts.push(`${codePointEscape(lo)}-${codePointEscape(hi)}`)
      i += 2
    } else {
      parts.push(codePointEscape(here.codePointAt(0)!))
    }
  }
  if (parts.length === 0) return negate ? "[^]" : "(?!)"
  return `[${negate ? "^" : ""}${parts.join("")}]`
}

export const translate = (pattern: string): string => {
  const chars = Array.from(pattern)
  let out = ""
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    if (c === "*") {
      // Collapse runs of "*" (same language, avoids pathological backtracking).
      while (chars[i + 1] === "*") i++
      out += "[^]*"
    } else if (c === "?") {
      out += "[^]"
    } else if (c === "[") {
      let j = i + 1
      if (chars[j] === "!") j++
      if (chars[j] === "]") j++
      while (j < chars.length && chars[j] !== "]") j++
      if (j >= chars.length) {
        out += codePointEscape(0x5b)
      } else {
        out += translateClass(chars.slice(i + 1, j).join(""))
        i = j
      }
    } else {
      out += codePointEscape(c.codePointAt(0)!)
    }
  }
  return `^${out}$`
}

export const compile = (pattern: string): RegExp => {
  let re = cache.get(pattern)
  if (re === undefined) {
    re = new RegExp(translate(pattern), "u")
    if (cache.size >= MAX_CACHE) cache.clear()
    cache.set(pattern, re)
  }
  return re
}

export const fnmatch = (name: string, pattern: string): boolean => compile(pattern).test(name)

/** A compiled matcher; literal patterns skip the regular expression entirely. */
export const matcher = (pattern: string): ((name: string) => boolean) => {
  if (!/[*?[]/.test(pattern)) return (name) => name === pattern
  const re = compile(pattern)
  return (name) => re.test(name)
}
