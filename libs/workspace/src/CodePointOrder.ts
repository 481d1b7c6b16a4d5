/**
 * Sort strings by Unicode code point (the contract's order), not by UTF-16 code unit, which is
 * what `<` compares: the two disagree when a character above U+FFFF meets one in U+E000–U+FFFF.
 * At the first differing unit, surrogates are lifted above the rest of the BMP.
 */
const lift = (unit: number): number =>
  unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit

export const compareCodePoints = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return lift(x) - lift(y)
  }
  return a.length - b.length
}

/** A UTF-16 surrogate: the only units on which code-unit order and code-point order differ. */
const SURROGATE = /[\uD800-\uDFFF]/

/**
 * `names` sorted in place by code point. Without a surrogate among them (names above U+FFFF are
 * rare) code-unit order is code-point order, and the engine's own string sort takes no
 * comparator call per comparison: 1,000 names in about a third of the time (issue 12).
 */
export const sortByCodePoint = (names: string[]): string[] => {
  for (const name of names) if (SURROGATE.test(name)) return names.sort(compareCodePoints)
  return names.sort()
}
