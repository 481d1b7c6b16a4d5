/**
 * Path globs for find_files: a pattern containing "/" is matched against a file's path relative
 * to the search directory, with git's wildmatch semantics (`git ls-files ':(glob)<pattern>'`):
 *
 * - the pattern and the path are split on "/" into components, matched component by component;
 *   `*`, `?` and `[…]` never match "/" (they stay inside one component);
 * - a component that is only stars, two or more (`**`), spans zero or more whole directories
 *   (`**` followed by a slash, leading or in the middle); as the last component (`docs/**`) it
 *   matches one or more components, i.e. every file below;
 * - a run of stars inside a component (`a**b`) is one `*`;
 * - inside a component: fnmatch syntax (Fnmatch.ts), plus `[^…]` as a negated set like `[!…]`
 *   (git accepts both); a backslash is an ordinary character and an unclosed `[` is literal (as in
 *   the base-name patterns; git would escape with the backslash, and match nothing on an unclosed `[`);
 * - "//" is one "/" and a leading "/" is dropped (every path glob is anchored at the search
 *   directory already; git normalizes the first and refuses the second); a trailing "/" matches
 *   no file (a file's path never ends with one); `.` and `..` are ordinary names, which a walk
 *   never yields (git would normalize them).
 *
 * The compiled pattern is a list of components run as an NFA over the path's components: the
 * state is the set of pattern positions reached so far (an array of at most components + 1
 * flags), and one path component advances every reached position at once. A position is tried
 * once per path component, so a path costs O(path length × pattern length) whatever the number of
 * `**` and `*` (each component match is itself linear, Fnmatch.ts); no regular expression, no
 * backtracking. The walk keeps each directory's state, so a file costs only its own name.
 */
import { type CompiledPattern, compilePattern, matchCompiled } from "./Fnmatch.js"

/** The NFA states reached after some leading path components (index n = the whole pattern). */
export type GlobState = Uint8Array

export interface PathGlob {
  /** The states before any path component (the search directory itself). */
  readonly initial: GlobState | undefined
  /** The states after one more path component; undefined when none is left. */
  readonly advance: (state: GlobState, component: string) => GlobState | undefined
  /** Whether a file named `name`, in the directory whose states are `state`, matches. */
  readonly matchesFile: (state: GlobState, name: string) => boolean
  /** Whether a file below the directory whose states are `state` could still match. */
  readonly mayMatchBelow: (state: GlobState) => boolean
}

/** A pattern with "/" is a path glob; without, it is matched against base names (fnmatch). */
export const isPathGlob = (pattern: string): boolean => pattern.includes("/")

const isGlobstar = (component: string): boolean => component.length >= 2 && /^\*+$/.test(component)

const componentMatcher = (component: string): ((name: string) => boolean) => {
  if (!component.includes("*") && !component.includes("?") && !component.includes("[")) {
    return (name) => name === component
  }
  const compiled: CompiledPattern = compilePattern(component, { caretNegates: true })
  return (name) => matchCompiled(compiled, name)
}

const ANY_COMPONENT = (_name: string) => true

/** Compile a path glob (linear in its length). */
export const compilePathGlob = (pattern: string): PathGlob => {
  const split = pattern.split("/")
  // A trailing "/" names a directory, never a file: the pattern matches nothing.
  const never = split.at(-1) === ""
  const parts = split.filter((part) => part !== "")
  const globstar: boolean[] = []
  const matchers: Array<(name: string) => boolean> = []
  for (const part of parts) {
    if (isGlobstar(part)) {
      // `**/**` spans what one `**` spans.
      if (globstar.at(-1) !== true) {
        globstar.push(true)
        matchers.push(ANY_COMPONENT)
      }
    } else {
      globstar.push(false)
      matchers.push(componentMatcher(part))
    }
  }
  if (globstar.at(-1) === true) {
    // A trailing `**` follows a "/" that must be matched: at least one component (git: `a/**`
    // matches `a/x` and `a/x/y`, never `a`). One any-component, then zero or more.
    globstar.splice(-1, 0, false)
    matchers.splice(-1, 0, ANY_COMPONENT)
  }
  const n = globstar.length
  /** tailFrom[i]: positions i… are all `**`, so reaching i is reaching the end. */
  const tailFrom: boolean[] = new Array(n + 1).fill(false)
  tailFrom[n] = true
  for (let i = n - 1; i >= 0 && globstar[i]; i--) tailFrom[i] = true

  /** Follow the zero-directory moves of `**` (positions only move forward). */
  const close = (state: Uint8Array): void => {
    for (let i = 0; i < n; i++) if (state[i] === 1 && globstar[i]) state[i + 1] = 1
  }

  const advance = (state: GlobState, component: string): GlobState | undefined => {
    const next = new Uint8Array(n + 1)
    let any = false
    for (let i = 0; i < n; i++) {
      if (state[i] !== 1) continue
      if (globstar[i]) {
        next[i] = 1
        any = true
      } else if (matchers[i]!(component)) {
        next[i + 1] = 1
        any = true
      }
    }
    if (!any) return undefined
    close(next)
    return next
  }

  const initial = never ? undefined : new Uint8Array(n + 1)
  if (initial !== undefined) {
    initial[0] = 1
    close(initial)
  }

  return {
    initial,
    advance,
    matchesFile: (state, name) => {
      // Position i takes `name` to i + 1 (or keeps it, for a `**`); the pattern then ends if
      // only `**` is left, which `tailFrom` says without building the next state.
      for (let i = 0; i < n; i++) {
        if (state[i] !== 1) continue
        if (globstar[i] ? tailFrom[i] : tailFrom[i + 1] && matchers[i]!(name)) return true
      }
      return false
    },
    mayMatchBelow: (state) => {
      // A file below needs at least one more component: some position before the end.
      for (let i = 0; i < n; i++) if (state[i] === 1) return true
      return false
    }
  }
}

/** Whether `path` (relative, "/"-separated, no empty component) matches the path glob. */
export const matchPath = (glob: PathGlob, path: string): boolean => {
  let state = glob.initial
  if (state === undefined) return false
  const components = path.split("/")
  for (let c = 0; c < components.length - 1; c++) {
    state = glob.advance(state, components[c]!)
    if (state === undefined) return false
  }
  return glob.matchesFile(state, components.at(-1)!)
}
