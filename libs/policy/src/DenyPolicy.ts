import { matcher } from "./Fnmatch.js"
import { isReservedName } from "./ReservedNames.js"

/**
 * The one path policy every channel consults (spec v0.2 §4, tool-contracts §5 steps 5–7).
 *
 * Verdicts are checked in the contract's order over the whole path: a reserved component wins
 * over a hidden one, which wins over a denied one. `.env` with hidden paths off is therefore
 * HIDDEN, not DENIED; `.serverfs-tmp-x` is RESERVED whatever the settings say.
 *
 * Deny rules are evaluated on every ancestor of the path, not only on its final name: a denied
 * directory denies its whole subtree on every channel, so a direct read of `keys.pem/inner` is
 * refused exactly like the walk of list/find/search prunes `keys.pem/` (docs/security-model.md,
 * "deny rules apply to subtrees").
 */
export type PolicyVerdict = "allowed" | "reserved" | "hidden" | "denied"

export interface PathPolicySettings {
  readonly allowHidden: boolean
  readonly disableDefaultDeny: boolean
  readonly extraDenyGlobs: ReadonlyArray<string>
}

/**
 * Built-in credential rules (active unless SERVERFS_DISABLE_DEFAULT_DENY), written once: denied
 * directory names, denied file names and denied name patterns. Every one is a plain lower-case
 * name glob, so the same list also serves as ripgrep excludes.
 *
 * They match whatever the ASCII letter case (`ID_RSA`, `KEY.PEM`, `.SSH`, `Foo.Env`): a
 * credential copied from a case-insensitive volume or renamed by hand is still a credential.
 * Only A–Z are folded (not other letters, as String.toLowerCase would), so the policy and the
 * ripgrep excludes built from the same list (ripgrepGlobIgnoringCase) agree exactly. Extra
 * globs stay case-sensitive (fnmatchcase), as documented for the reference.
 * (Deliberate deviation: the reference matches these case-sensitively; docs/deviations.md.)
 */
const DEFAULT_DENIED_COMPONENT_LIST = [".ssh", ".aws", ".gnupg", ".kube"] as const
const DEFAULT_DENIED_NAME_LIST = [".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"] as const
const DEFAULT_DENIED_PATTERN_LIST = [".env.*", "*.env", "*.pem", "*.key"] as const

const DEFAULT_DENIED_COMPONENTS: ReadonlySet<string> = new Set(DEFAULT_DENIED_COMPONENT_LIST)
const DEFAULT_DENIED_NAMES: ReadonlySet<string> = new Set(DEFAULT_DENIED_NAME_LIST)
const DEFAULT_DENIED_GLOBS = DEFAULT_DENIED_PATTERN_LIST.map(matcher)

/** The built-in rules as plain name globs (the same rules, for ripgrep). */
const DEFAULT_DENY_NAME_GLOBS: ReadonlyArray<string> = [
  ...DEFAULT_DENIED_COMPONENT_LIST,
  ...DEFAULT_DENIED_NAME_LIST,
  ...DEFAULT_DENIED_PATTERN_LIST
]

const isDefaultDenied = (name: string): boolean => {
  const folded = foldAscii(name)
  return (
    DEFAULT_DENIED_COMPONENTS.has(folded) ||
    DEFAULT_DENIED_NAMES.has(folded) ||
    DEFAULT_DENIED_GLOBS.some((m) => m(folded))
  )
}

/** A–Z to a–z, nothing else (String.toLowerCase would also fold non-ASCII letters). */
const foldAscii = (text: string): string => {
  let out = ""
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0x41 && unit <= 0x5a) {
      out += text.slice(from, i) + String.fromCharCode(unit + 0x20)
      from = i + 1
    }
  }
  return from === 0 ? text : out + text.slice(from)
}

/**
 * A lower-case built-in glob as a ripgrep glob that ignores ASCII case the same way: each letter
 * becomes a `[xX]` class (`*.pem` → `*.[pP][eE][mM]`). A plain `--glob` list keeps the excludes
 * one flat argv list, and folds exactly A–Z like the policy (`--iglob` leaves folding to
 * ripgrep's regex engine, whose rules are its own).
 */
const ripgrepGlobIgnoringCase = (glob: string): string =>
  glob.replace(/[a-z]/g, (letter) => `[${letter}${letter.toUpperCase()}]`)

/**
 * One extra glob, compiled. Since deny rules apply to every ancestor, any rule that denies a
 * directory denies its subtree; the forms differ only in what they are matched against:
 * - a glob without "/" (`*.log`, `secrets`) is matched against every name of the path;
 * - `name/**` and `name/` are the same as `name`: the directory and everything below it;
 * - a glob with "/" inside (`docs/secret.md`, `build/*` + `/cache/**`), or anchored with a
 *   leading "/" or "./" (`/top.txt`), is matched against each ancestor path from the workdir
 *   root; a leading `**` + `/` also matches at the root itself. (The reference matched
 *   globs with "/" against a base name, where they could never match.)
 */
interface ExtraRule {
  readonly onName: boolean
  readonly test: (text: string) => boolean
  /** The name glob itself, for ripgrep excludes (only set for name rules). */
  readonly nameGlob?: string
}

const compileExtra = (glob: string): ExtraRule => {
  const anchored = /^(\.\/|\/)/.test(glob)
  let body = glob.replace(/^(\.\/|\/)+/, "")
  if (body.endsWith("/**")) body = body.slice(0, -3)
  let end = body.length
  while (end > 0 && body[end - 1] === "/") end-- // trailing slashes (a loop: `/\/+$/` is quadratic)
  body = body.slice(0, end)
  if (!anchored && !body.includes("/")) return { onName: true, test: matcher(body), nameGlob: body }
  const full = matcher(body)
  if (!body.startsWith("**/")) return { onName: false, test: full }
  const rootLevel = matcher(body.slice(3))
  return { onName: false, test: (path) => full(path) || rootLevel(path) }
}

/** The ripgrep exclude globs of a policy, computed once when it is made (see ripgrepExcludes). */
const ripgrepExcludesOf = (
  disableDefaultDeny: boolean,
  extras: ReadonlyArray<ExtraRule>
): ReadonlyArray<string> => {
  const names: Array<string> = disableDefaultDeny ? [] : DEFAULT_DENY_NAME_GLOBS.map(ripgrepGlobIgnoringCase)
  for (const rule of extras) {
    if (rule.nameGlob !== undefined && !/[\\[\]{}!]/.test(rule.nameGlob)) names.push(rule.nameGlob)
  }
  return names.map((glob) => `!${glob}`)
}

export class DenyPolicy {
  private readonly extras: ReadonlyArray<ExtraRule>
  private readonly excludes: ReadonlyArray<string>

  private constructor(readonly settings: PathPolicySettings) {
    this.extras = settings.extraDenyGlobs.map(compileExtra)
    this.excludes = ripgrepExcludesOf(settings.disableDefaultDeny, this.extras)
  }

  static make(settings: PathPolicySettings): DenyPolicy {
    return new DenyPolicy(settings)
  }

  /** Is the entry `name` at `prefix` (its path relative to the root) denied by a deny rule? */
  private deniedAt(prefix: string, name: string): boolean {
    if (!this.settings.disableDefaultDeny && isDefaultDenied(name)) return true
    for (const rule of this.extras) if (rule.test(rule.onName ? name : prefix)) return true
    return false
  }

  /** Verdict for a whole normalized path ("" components = the root, always allowed). */
  check(components: ReadonlyArray<string>): PolicyVerdict {
    if (components.some(isReservedName)) return "reserved"
    if (!this.settings.allowHidden && components.some((c) => c.startsWith("."))) return "hidden"
    let prefix = ""
    for (const name of components) {
      prefix = prefix === "" ? name : `${prefix}/${name}`
      if (this.deniedAt(prefix, name)) return "denied"
    }
    return "allowed"
  }

  /**
   * Verdict for one child of an already-allowed directory, for walks that visit a tree entry by
   * entry (list, find). `parent` is the parent's path relative to the root ("" for the root).
   */
  checkChild(parent: string, name: string): PolicyVerdict {
    if (isReservedName(name)) return "reserved"
    if (!this.settings.allowHidden && name.startsWith(".")) return "hidden"
    return this.deniedAt(parent === "" ? name : `${parent}/${name}`, name) ? "denied" : "allowed"
  }

  /**
   * The deny rules as ripgrep exclude globs, so search never even reads a denied file. Only
   * name rules whose glob means the same to ripgrep and to fnmatch are passed (no escapes,
   * classes or braces); the rest are enforced by the per-result policy check alone. ripgrep
   * prunes an excluded directory's subtree, exactly like the ancestor rule here.
   */
  ripgrepExcludes(): ReadonlyArray<string> {
    return this.excludes
  }

  /** Number of extra rules, for the startup log (glob text is never logged). */
  get extraRuleCount(): number {
    return this.extras.length
  }
}
