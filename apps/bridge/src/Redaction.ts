import * as posix from "node:path/posix"

/**
 * Host-path confidentiality for everything the bridge stores or returns (spec v0.3 §16,
 * bridge-internals §6 "Redaction"): event payloads, request payloads and final responses.
 *
 * - values of path-valued keys (and lists of paths) that are absolute become workdir-relative
 *   ("." for the root itself) or `<outside-workdir>`;
 * - any workdir root embedded in free text becomes `<workdir>`;
 * - provider-native id keys are dropped.
 */
const PATH_KEYS = new Set([
  "path",
  "cwd",
  "relative_cwd",
  "host_path",
  "file_path",
  "grantRoot",
  "blocked_path"
])
const PATH_LIST_KEYS = new Set(["read", "write", "readableRoots", "writableRoots"])
const DROPPED_KEYS = new Set([
  "native_session_id",
  "native_turn_id",
  "thread_id",
  "turn_id",
  "threadId",
  "turnId",
  "session_id",
  "sessionId"
])
export const OUTSIDE = "<outside-workdir>"
export const WORKDIR = "<workdir>"

const trimSlash = (p: string): string => (p.length > 1 && p.endsWith("/") ? p.replace(/\/+$/, "") : p)

export class Redactor {
  private readonly root: string
  private readonly roots: ReadonlyArray<string>

  /** `root` is the task's workdir; `otherRoots` every configured workdir (all are hidden). */
  constructor(root: string, otherRoots: ReadonlyArray<string>) {
    this.root = trimSlash(root)
    // Longest first, so a nested workdir is replaced before its parent.
    this.roots = [...new Set([this.root, ...otherRoots.map(trimSlash)])].sort((a, b) => b.length - a.length)
  }

  /** An absolute path as the chat may see it. */
  path(value: string): string {
    if (!value.startsWith("/")) return this.text(value)
    // Normalized first: `<root>/../etc` is outside the workdir, not the relative path "../etc".
    const clean = trimSlash(posix.normalize(value))
    if (clean === this.root) return "."
    if (clean.startsWith(`${this.root}/`)) return clean.slice(this.root.length + 1)
    return OUTSIDE
  }

  /** Free text: every workdir root is replaced by `<workdir>`. */
  text(value: string): string {
    let out = value
    for (const root of this.roots) if (root !== "/" && root !== "") out = out.split(root).join(WORKDIR)
    return out
  }

  /** A JSON value, recursively. */
  value(input: unknown, key?: string): unknown {
    if (typeof input === "string")
      return key !== undefined && PATH_KEYS.has(key) ? this.path(input) : this.text(input)
    if (Array.isArray(input)) {
      return key !== undefined && PATH_LIST_KEYS.has(key)
        ? input.map((v) => (typeof v === "string" ? this.path(v) : this.value(v)))
        : input.map((v) => this.value(v))
    }
    if (input !== null && typeof input === "object") {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
        if (DROPPED_KEYS.has(k)) continue
        out[this.text(k)] = this.value(v, k)
      }
      return out
    }
    return input
  }

  record<T extends Record<string, unknown>>(input: T): T {
    return this.value(input) as T
  }
}
