/**
 * ServerFS's own names inside a workdir (spec v0.2 §4): the temp files of atomic publication and
 * the disabled-slot sentinel. They are refused on every channel, in every configuration.
 */
export const TEMP_PREFIX = ".serverfs-tmp-"
export const DISABLED_SENTINEL = ".serverfs-disabled"

const RESERVED_PREFIXES = [TEMP_PREFIX, DISABLED_SENTINEL] as const

export const isReservedName = (name: string): boolean => RESERVED_PREFIXES.some((p) => name.startsWith(p))

/** ripgrep exclusions so search never even opens a reserved entry (defence before the re-check). */
export const RESERVED_RG_EXCLUDES: ReadonlyArray<string> = RESERVED_PREFIXES.map((p) => `!${p}*`)
