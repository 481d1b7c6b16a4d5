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
