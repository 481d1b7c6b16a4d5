import * as posix from "node:path/posix"

/**
 * Host-path confidentiality for the agent plane (spec v0.3 §16, bridge-internals §6
 * "Redaction"): the one home of the rule. The bridge applies it to everything it stores or
 * returns — event payloads, request payloads, final responses and error messages — and the
 * adapters use it to build what they show (command lines, native permission data). Whatever an
 * adapter forgot, the bridge's pass still removes.
 *
 * - an absolute path under a path-valued key (or in a list of paths) becomes workdir-relative
 *   ("." for the root itself) or `<outside-workdir>`;
 * - every configured workdir root embedded in free text becomes `<workdir>`;
 * - in a message (an error text), every other absolute path becomes `<path>` and the text is
 *   bounded;
 * - in a command line, the task's root as a whole path component becomes workdir-relative, other
 *   text is kept (commands are shown for an informed decision, spec §16);
 * - provider-native id keys are dropped from structured values.
 *
 * No regular expression is built from any input: roots are matched with `indexOf`.
 */
export const OUTSIDE_WORKDIR = "<outside-workdir>"
export const WORKDIR_TEXT = "<workdir>"
export const PATH_TEXT = "<path>"

/** The longest message kept (code points beyond it become "…"). */
export const MAX_MESSAGE_LENGTH = 2000

const PATH_KEYS: ReadonlySet<string> = new Set([
  "path",
  "cwd",
  "relative_cwd",
  "host_path",
  "file_path",
  "grantRoot",
  "blocked_path"
])
const PATH_LIST_KEYS: ReadonlySet<string> = new Set(["read", "write", "readableRoots", "writableRoots"])
const DROPPED_KEYS: ReadonlySet<string> = new Set([
  "native_session_id",
  "native_turn_id",
  "thread_id",
  "turn_id",
  "threadId",
  "turnId",
  "session_id",
  "sessionId"
])

/** Characters that end a path inside a command line. */
const COMMAND_PATH_END = new Set([..." \t\n\r'\"`;|&<>()"])
/** Characters after which an absolute path starts in a message (or the text's start). */
const MESSAGE_PATH_LEAD = new Set([..." \t\n\r'\"(=[,:"])
/** Characters that end an absolute path in a message. */
const MESSAGE_PATH_END = new Set([..." \t\n\r'\")],;:"])

const trimSlash = (p: string): string => {
  let end = p.length
  while (end > 1 && p.charCodeAt(end - 1) === 47) end--
  return p.slice(0, end)
}

/** A root usable for replacement: "/" and "" would match everything. */
const usable = (root: string): boolean => root !== "/" && root !== ""

const replaceAll = (text: string, needle: string, by: string): string => text.split(needle).join(by)

/** Every absolute path (after a lead character or at the start) replaced by `<path>`. */
const blankAbsolutePaths = (text: string): string => {
  let out = ""
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    // "scheme://host/…" is a URL, not a host path: its "//" follows a colon.
    const url = text[i - 1] === ":" && text[i + 1] === "/"
    if (c === "/" && !url && (i === 0 || MESSAGE_PATH_LEAD.has(text[i - 1] as string))) {
      let end = i + 1
      while (end < text.length && !MESSAGE_PATH_END.has(text[end] as string)) end++
      out += PATH_TEXT
      i = end
    } else {
      out += c
      i++
    }
  }
  return out
}

const bound = (text: string, max: number): string => {
  const points = Array.from(text)
  return points.length > max ? `${points.slice(0, max).join("")}…` : text
}

export class HostPathRedaction {
  /** The task's workdir root, without trailing slashes. */
  readonly root: string
  /** Every configured root (the task's included), longest first: a nested workdir before its parent. */
  readonly roots: ReadonlyArray<string>

  /** `root` is the task's workdir; `otherRoots` every configured workdir (all are hidden). */
  constructor(root: string, otherRoots: ReadonlyArray<string> = []) {
    this.root = trimSlash(root)
    this.roots = [...new Set([this.root, ...otherRoots.map(trimSlash)])]
      .filter(usable)
      .sort((a, b) => b.length - a.length)
  }

  /** An absolute path as the chat may see it; anything else is free text. */
  path(value: string): string {
    if (!value.startsWith("/")) return this.text(value)
    // Normalized first: `<root>/../etc` is outside the workdir, not the relative path "../etc".
    const clean = trimSlash(posix.normalize(value))
    if (clean === this.root) return "."
    if (usable(this.root) && clean.startsWith(`${this.root}/`)) return clean.slice(this.root.length + 1)
    return OUTSIDE_WORKDIR
  }

  /** Free text: every workdir root is replaced by `<workdir>`; other text is kept. */
  text(value: string): string {
    let out = value
    for (const root of this.roots) out = replaceAll(out, root, WORKDIR_TEXT)
    return out
  }

  /**
   * An error or diagnostic text fit to store and return: workdir roots become `<workdir>`, every
   * other absolute path (a home directory, a temp file, a socket) `<path>`, and it is bounded.
   */
  message(value: string, max: number = MAX_MESSAGE_LENGTH): string {
    return bound(blankAbsolutePaths(this.text(value)).trim(), max)
  }

  /**
   * A command line for display: each occurrence of the task's root as a whole path component
   * becomes workdir-relative (`<root>/src/a.ts` → `src/a.ts`, `<root>` → `.`); everything else
   * is kept here, and the bridge's `value` pass over the stored payload then hides every other
   * root occurrence as `<workdir>`.
   */
  command(value: string): string {
    let out = ""
    let from = 0
    if (usable(this.root)) {
      for (let at = value.indexOf(this.root); at !== -1; at = value.indexOf(this.root, from)) {
        const after = at + this.root.length
        const next = value[after]
        // A whole component: the root ends the token or continues with "/".
        if (next !== undefined && next !== "/" && !COMMAND_PATH_END.has(next)) {
          out += value.slice(from, after)
          from = after
          continue
        }
        let end = after
        while (end < value.length && !COMMAND_PATH_END.has(value[end] as string)) end++
        let tail = value.slice(after, end)
        while (tail.startsWith("/")) tail = tail.slice(1)
        out += value.slice(from, at) + (tail === "" ? "." : tail)
        from = end
      }
    }
    return out + value.slice(from)
  }

  /** A JSON value, recursively: path keys as paths, strings as text, native ids dropped. */
  value(input: unknown, key?: string): unknown {
    if (typeof input === "string")
      return key !== undefined && (PATH_KEYS.has(key) || PATH_LIST_KEYS.has(key))
        ? this.path(input)
        : this.text(input)
    if (Array.isArray(input)) {
      return key !== undefined && PATH_LIST_KEYS.has(key)
        ? input.map((v) => (typeof v === "string" ? this.path(v) : this.value(v)))
        : input.map((v) => this.value(v))
    }
    if (input !== null && typeof input === "object") {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(input)) {
        if (DROPPED_KEYS.has(k)) continue
        out[this.text(k)] = this.value(v, k)
      }
      return out
    }
    return input
  }

  /** A record, recursively (see `value`). */
  record(input: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(input)) {
      if (DROPPED_KEYS.has(k)) continue
      out[this.text(k)] = this.value(v, k)
    }
    return out
  }
}
