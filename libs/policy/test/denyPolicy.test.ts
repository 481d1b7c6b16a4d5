import { describe, expect, it } from "@effect/vitest"
import { DenyPolicy, fnmatch, type PathPolicySettings, type PolicyVerdict } from "@serverfs/policy"
import { FastCheck } from "effect"

const EXTRA_GLOBS = ["internal/**", "logs_*/**", "*.log", "docs/secret.md", "/top.txt"] as const

const split = (p: string): ReadonlyArray<string> => (p === "" ? [] : p.split("/"))

/** Walk a path the way list/find do: one checkChild per component, stop at the first refusal. */
const walk = (policy: DenyPolicy, components: ReadonlyArray<string>): PolicyVerdict => {
  let parent = ""
  for (const name of components) {
    const verdict = policy.checkChild(parent, name)
    if (verdict !== "allowed") return verdict
    parent = parent === "" ? name : `${parent}/${name}`
  }
  return "allowed"
}

// ---------------------------------------------------------------------------------------------
// The hidden × default-deny × extra-glob matrix.
// ---------------------------------------------------------------------------------------------

interface Traits {
  /** Some component starts with .serverfs-tmp- or .serverfs-disabled. */
  readonly reserved?: true
  /** Some component starts with ".". */
  readonly hidden?: true
  /** Some component (the path itself or an ancestor) is caught by a built-in credential rule. */
  readonly builtin?: true
  /** Some component or ancestor path is caught by one of EXTRA_GLOBS. */
  readonly extra?: true
}

const COMBINATIONS = [false, true].flatMap((allowHidden) =>
  [false, true].flatMap((disableDefaultDeny) =>
    [false, true].map((extras) => ({ allowHidden, disableDefaultDeny, extras }))
  )
)

const label = (c: (typeof COMBINATIONS)[number]): string =>
  `hidden=${c.allowHidden ? "allowed" : "refused"} defaultDeny=${c.disableDefaultDeny ? "off" : "on"} extras=${c.extras ? "on" : "off"}`

const policyOf = (c: (typeof COMBINATIONS)[number]): DenyPolicy =>
  DenyPolicy.make({
    allowHidden: c.allowHidden,
    disableDefaultDeny: c.disableDefaultDeny,
    extraDenyGlobs: c.extras ? EXTRA_GLOBS : []
  })

/** The contract's verdict order: reserved > hidden > denied > allowed. */
const expectedVerdict = (t: Traits, c: (typeof COMBINATIONS)[number]): PolicyVerdict => {
  if (t.reserved) return "reserved"
  if (t.hidden && !c.allowHidden) return "hidden"
  if ((t.builtin && !c.disableDefaultDeny) || (t.extra && c.extras)) return "denied"
  return "allowed"
}

const MATRIX: ReadonlyArray<readonly [path: string, traits: Traits, why: string]> = [
  ["", {}, "the root is always allowed"],
  ["readme.md", {}, "an ordinary file"],
  ["src/main.ts", {}, "an ordinary nested file"],
  // built-in: credential directories as ANY component
  [".ssh", { hidden: true, builtin: true }, ".ssh itself"],
  [".ssh/id_ed25519.pub", { hidden: true, builtin: true }, "anything below .ssh"],
  ["a/.ssh/b", { hidden: true, builtin: true }, ".ssh as a middle component"],
  [".aws/credentials", { hidden: true, builtin: true }, ".aws"],
  [".gnupg/pubring.kbx", { hidden: true, builtin: true }, ".gnupg"],
  ["home/.kube", { hidden: true, builtin: true }, ".kube as the last component"],
  [".kube/config", { hidden: true, builtin: true }, ".kube as the first component"],
  // built-in: names and basename globs
  [".env", { hidden: true, builtin: true }, ".env (HIDDEN first when hidden paths are refused)"],
  ["app/.env", { hidden: true, builtin: true }, ".env in a subdirectory"],
  [".env.local", { hidden: true, builtin: true }, ".env.* glob"],
  [".env.", { hidden: true, builtin: true }, ".env.* with an empty tail"],
  [".env.production/x", { hidden: true, builtin: true }, "a .env.* directory denies its subtree"],
  [".envrc", { hidden: true }, ".envrc is not .env, .env.* or *.env"],
  ["prod.env", { builtin: true }, "*.env glob (not hidden)"],
  ["config/prod.env", { builtin: true }, "*.env in a subdirectory"],
  ["server.pem", { builtin: true }, "*.pem glob"],
  ["tls.key", { builtin: true }, "*.key glob"],
  [
    "keys.pem/inner.txt",
    { builtin: true },
    "a denied ancestor denies the subtree (deviation: every ancestor)"
  ],
  ["id_rsa", { builtin: true }, "id_rsa"],
  ["id_dsa", { builtin: true }, "id_dsa"],
  ["id_ecdsa", { builtin: true }, "id_ecdsa"],
  ["id_ed25519", { builtin: true }, "id_ed25519"],
  ["home/me/id_rsa", { builtin: true }, "id_rsa at any depth"],
  ["id_rsa/notes.txt", { builtin: true }, "a directory named id_rsa denies its subtree"],
  ["id_rsa.pub", {}, "public keys are not denied"],
  ["a.env.bak", {}, "*.env is anchored at the end"],
  ["env", {}, "env without the dot"],
  ["ssh", {}, "ssh without the dot"],
  ["pem", {}, "pem is not *.pem"],
  // built-in rules ignore ASCII case (deviation: the reference is case-sensitive)
  ["ID_RSA", { builtin: true }, "built-in names ignore case"],
  ["Id_Ed25519", { builtin: true }, "built-in names ignore case (mixed)"],
  ["x.PEM", { builtin: true }, "*.pem ignores case"],
  ["KEY.PEM", { builtin: true }, "*.pem ignores case (whole name upper-case)"],
  ["tls.KEY", { builtin: true }, "*.key ignores case"],
  [".SSH", { hidden: true, builtin: true }, ".SSH is .ssh"],
  ["a/.Ssh/config", { hidden: true, builtin: true }, "a mixed-case .ssh denies its subtree"],
  [".AWS/credentials", { hidden: true, builtin: true }, ".AWS is .aws"],
  [".ENV", { hidden: true, builtin: true }, ".ENV is .env"],
  [".Env.Local", { hidden: true, builtin: true }, ".env.* ignores case"],
  ["Foo.Env", { builtin: true }, "*.env ignores case"],
  ["x.\u212Aey", {}, "only A-Z fold: the Kelvin sign is not K (ripgrep's excludes agree)"],
  ["ID_RSA.PUB", {}, "public keys are not denied, whatever the case"],
  // extra globs
  ["internal", { extra: true }, "internal/** denies the directory itself"],
  ["internal/x/y", { extra: true }, "internal/** denies everything below"],
  ["a/internal/b", { extra: true }, "a name/** head matches ANY component"],
  ["internals", {}, "internal/** does not catch internals"],
  ["logs_2024/app.txt", { extra: true }, "logs_*/** head is a glob"],
  ["logs_", { extra: true }, "logs_* matches logs_"],
  ["logs/app.txt", {}, "logs_*/** needs the underscore"],
  ["x.log", { extra: true }, "*.log against the basename"],
  ["a/b/c.log", { extra: true }, "*.log at any depth"],
  ["x.log/inner", { extra: true }, "*.log on an ancestor denies the subtree (deviation)"],
  [".log", { hidden: true, extra: true }, ".log is hidden and matches *.log"],
  ["x.logs", {}, "*.log is anchored"],
  ["docs/secret.md", { extra: true }, "a glob with / matches the path from the root"],
  ["docs/secret.md/x", { extra: true }, "… and its subtree"],
  ["docs", {}, "… but not its parent"],
  ["docs/other.md", {}, "… nor a sibling"],
  ["docs/secret.md.bak", {}, "… nor a longer name"],
  ["a/docs/secret.md", {}, "a glob with / is anchored at the workdir root"],
  ["secret.md", {}, "a glob with / does not match a basename"],
  ["top.txt", { extra: true }, "/top.txt: a leading / anchors at the root"],
  ["a/top.txt", {}, "/top.txt is anchored, so a deeper top.txt is allowed"],
  // reserved namespace: every configuration
  [".serverfs-tmp-x", { reserved: true, hidden: true }, "the temp prefix is reserved"],
  [".serverfs-tmp-", { reserved: true, hidden: true }, "the bare temp prefix is reserved"],
  [".serverfs-disabled", { reserved: true, hidden: true }, "the sentinel is reserved"],
  [
    ".serverfs-disabled.bak",
    { reserved: true, hidden: true },
    "a name STARTING with the sentinel is reserved"
  ],
  ["a/.serverfs-tmp-abc/b", { reserved: true, hidden: true }, "a reserved middle component"],
  [
    ".ssh/.serverfs-tmp-x",
    { reserved: true, hidden: true, builtin: true },
    "reserved beats hidden and denied"
  ],
  ["internal/.serverfs-tmp-1", { reserved: true, hidden: true, extra: true }, "reserved beats an extra glob"],
  [".serverfs-tm", { hidden: true }, "a shorter prefix is only hidden"],
  ["serverfs-tmp-x", {}, "without the dot it is an ordinary name"],
  ["..\\..\\etc", { hidden: true }, "a backslash name starting with . is hidden, not an escape"]
]

describe("DenyPolicy.check: hidden × default-deny × extra-glob matrix", () => {
  it.each(MATRIX)("%j (%s)", (path, traits) => {
    const components = split(path)
    const actual = Object.fromEntries(COMBINATIONS.map((c) => [label(c), policyOf(c).check(components)]))
    const expected = Object.fromEntries(COMBINATIONS.map((c) => [label(c), expectedVerdict(traits, c)]))
    expect(actual).toEqual(expected)
  })

  it.each(MATRIX.filter(([p]) => split(p).length === 1))(
    "checkChild('', %j) gives the same verdict as check in every configuration (%s)",
    (name) => {
      for (const c of COMBINATIONS)
        expect(policyOf(c).checkChild("", name), label(c)).toBe(policyOf(c).check([name]))
    }
  )

  it.each(MATRIX)("the entry-by-entry walk refuses %j exactly when check does (%s)", (path) => {
    for (const c of COMBINATIONS) {
      const policy = policyOf(c)
      expect(walk(policy, split(path)) === "allowed", label(c)).toBe(policy.check(split(path)) === "allowed")
    }
  })
})

describe("DenyPolicy: verdict order", () => {
  const closed = DenyPolicy.make({ allowHidden: false, disableDefaultDeny: false, extraDenyGlobs: [] })
  const open = DenyPolicy.make({ allowHidden: true, disableDefaultDeny: true, extraDenyGlobs: [] })

  it(".env with hidden paths refused → hidden, not denied", () => {
    expect(closed.check([".env"])).toBe("hidden")
    expect(closed.checkChild("", ".env")).toBe("hidden")
  })

  it(".env with hidden paths allowed → denied", () => {
    const policy = DenyPolicy.make({ allowHidden: true, disableDefaultDeny: false, extraDenyGlobs: [] })
    expect(policy.check([".env"])).toBe("denied")
    expect(policy.checkChild("", ".env")).toBe("denied")
  })

  it(".serverfs-tmp-x with everything released (allowHidden, no default deny, no globs) → reserved", () => {
    expect(open.check([".serverfs-tmp-x"])).toBe("reserved")
    expect(open.checkChild("", ".serverfs-tmp-x")).toBe("reserved")
    expect(open.checkChild("deep/dir", ".serverfs-tmp-x")).toBe("reserved")
    expect(open.check(["deep", ".serverfs-disabled"])).toBe("reserved")
  })

  it("a reserved component anywhere wins over a hidden component earlier in the path", () => {
    expect(closed.check([".hidden", "x", ".serverfs-tmp-1"])).toBe("reserved")
  })

  it("a hidden component anywhere wins over a denied component earlier in the path", () => {
    expect(closed.check(["id_rsa", ".x"])).toBe("hidden")
  })

  it("with everything released, every non-reserved name is allowed", () => {
    for (const name of [
      ".ssh",
      ".env",
      "id_rsa",
      "server.pem",
      "tls.key",
      "prod.env",
      ".aws",
      ".gnupg",
      ".kube"
    ]) {
      expect(open.check([name]), name).toBe("allowed")
      expect(open.check(["a", name, "b"]), name).toBe("allowed")
    }
  })
})

describe("DenyPolicy: extra globs", () => {
  const withGlobs = (...extraDenyGlobs: string[]) =>
    DenyPolicy.make({ allowHidden: true, disableDefaultDeny: true, extraDenyGlobs })

  it("logs/** denies logs, logs/x/y and a/logs, not logs2 or xlogs", () => {
    const p = withGlobs("logs/**")
    expect(p.check(["logs"])).toBe("denied")
    expect(p.check(["logs", "x", "y"])).toBe("denied")
    expect(p.check(["a", "logs"])).toBe("denied")
    expect(p.checkChild("a", "logs")).toBe("denied")
    expect(p.check(["logs2"])).toBe("allowed")
    expect(p.check(["xlogs", "y"])).toBe("allowed")
  })

  it("*.log denies x.log/inner (ancestor) and a/x.log", () => {
    const p = withGlobs("*.log")
    expect(p.check(["x.log", "inner"])).toBe("denied")
    expect(p.check(["a", "x.log"])).toBe("denied")
    expect(p.checkChild("a", "x.log")).toBe("denied")
    expect(p.check(["x.log.txt"])).toBe("allowed")
  })

  it("docs/secret.md denies exactly that path and its subtree", () => {
    const p = withGlobs("docs/secret.md")
    expect(p.check(["docs", "secret.md"])).toBe("denied")
    expect(p.check(["docs", "secret.md", "x"])).toBe("denied")
    expect(p.checkChild("docs", "secret.md")).toBe("denied")
    expect(p.checkChild("", "docs")).toBe("allowed")
    expect(p.checkChild("", "secret.md")).toBe("allowed")
    expect(p.checkChild("a/docs", "secret.md")).toBe("allowed")
    expect(p.check(["docs"])).toBe("allowed")
    expect(p.check(["a", "docs", "secret.md"])).toBe("allowed")
  })

  it("build/*/cache/** denies build/a/cache and below, not build/a or build/cache", () => {
    const p = withGlobs("build/*/cache/**")
    expect(p.check(["build", "a", "cache"])).toBe("denied")
    expect(p.check(["build", "a", "cache", "x", "y"])).toBe("denied")
    expect(p.checkChild("build/a", "cache")).toBe("denied")
    expect(p.check(["build", "a"])).toBe("allowed")
    expect(p.check(["build", "cache"])).toBe("allowed")
    expect(p.check(["x", "build", "a", "cache"])).toBe("allowed")
    expect(p.check(["build", "a", "cachex"])).toBe("allowed")
  })

  it("a path glob uses fnmatch semantics: * also crosses / (build/*/cache matches build/a/b/cache)", () => {
    const p = withGlobs("build/*/cache/**")
    expect(p.check(["build", "a", "b", "cache"])).toBe("denied")
  })

  it("a leading / or ./ anchors a glob at the workdir root", () => {
    for (const glob of ["/docs/secret.md", "./docs/secret.md", "//docs/secret.md", "././/docs/secret.md"]) {
      const p = withGlobs(glob)
      expect(p.check(["docs", "secret.md"]), glob).toBe("denied")
      expect(p.check(["docs"]), glob).toBe("allowed")
    }
    for (const glob of ["/top.txt", "./top.txt"]) {
      const p = withGlobs(glob)
      expect(p.check(["top.txt"]), glob).toBe("denied")
      expect(p.check(["top.txt", "below"]), glob).toBe("denied")
      expect(p.check(["sub", "top.txt"]), glob).toBe("allowed")
    }
    expect(withGlobs("/internal/**").check(["internal", "x"])).toBe("denied")
    expect(withGlobs("/internal/**").check(["a", "internal", "x"])).toBe("allowed")
  })

  it("a trailing / denies the directory and its subtree, like /**", () => {
    const p = withGlobs("logs/")
    expect(p.check(["logs"])).toBe("denied")
    expect(p.check(["a", "logs", "x"])).toBe("denied")
    expect(p.check(["logsx"])).toBe("allowed")
  })

  it("a leading **/ also matches at the root", () => {
    const p = withGlobs("**/cache/x")
    expect(p.check(["cache", "x"])).toBe("denied")
    expect(p.check(["a", "b", "cache", "x"])).toBe("denied")
    expect(p.check(["cache", "y"])).toBe("allowed")
  })

  it("extra globs are case-sensitive", () => {
    const p = withGlobs("*.log", "Secret/**")
    expect(p.check(["x.LOG"])).toBe("allowed")
    expect(p.check(["secret", "x"])).toBe("allowed")
    expect(p.check(["Secret", "x"])).toBe("denied")
  })

  it("extra globs stay active with the default rules disabled and hidden paths allowed", () => {
    const p = withGlobs(".env", ".ssh/**")
    expect(p.check([".env"])).toBe("denied")
    expect(p.check([".ssh", "id_rsa"])).toBe("denied")
    expect(p.check(["id_rsa"])).toBe("allowed")
  })

  it("extra globs cannot release the reserved namespace", () => {
    const p = withGlobs("!.serverfs-tmp-*", "[!.]*")
    expect(p.check([".serverfs-tmp-1"])).toBe("reserved")
  })

  it("extraRuleCount counts the rules (the startup log never shows their text)", () => {
    expect(withGlobs().extraRuleCount).toBe(0)
    expect(withGlobs(...EXTRA_GLOBS).extraRuleCount).toBe(EXTRA_GLOBS.length)
  })

  it("the policy keeps the settings it was made with", () => {
    const settings: PathPolicySettings = {
      allowHidden: true,
      disableDefaultDeny: false,
      extraDenyGlobs: ["a"]
    }
    expect(DenyPolicy.make(settings).settings).toEqual(settings)
  })
})

// ---------------------------------------------------------------------------------------------
// Property: the direct check and the entry-by-entry walk agree.
// ---------------------------------------------------------------------------------------------

const COMPONENT_POOL = [
  "a",
  "b",
  "src",
  ".ssh",
  ".aws",
  ".env",
  ".env.local",
  ".envrc",
  "prod.env",
  "k.pem",
  "x.PEM",
  "tls.key",
  "id_rsa",
  "ID_RSA",
  "x.log",
  "logs",
  "logs_1",
  "internal",
  "docs",
  "secret.md",
  "top.txt",
  "build",
  "cache",
  ".hidden",
  ".serverfs-tmp-1",
  ".serverfs-disabled",
  "..\\x"
] as const

const GLOB_POOL = [...EXTRA_GLOBS, "logs/**", "build/*/cache/**", "./docs/**", "a/b", "*"] as const

const settingsArb: FastCheck.Arbitrary<PathPolicySettings> = FastCheck.record({
  allowHidden: FastCheck.boolean(),
  disableDefaultDeny: FastCheck.boolean(),
  extraDenyGlobs: FastCheck.subarray([...GLOB_POOL])
})

const pathArb = FastCheck.array(FastCheck.constantFrom(...COMPONENT_POOL), { maxLength: 5 })

describe("DenyPolicy: walk/direct consistency", () => {
  it("check(path) is allowed iff every step of the checkChild walk is allowed", () => {
    FastCheck.assert(
      FastCheck.property(settingsArb, pathArb, (settings, components) => {
        const policy = DenyPolicy.make(settings)
        expect(policy.check(components) === "allowed").toBe(walk(policy, components) === "allowed")
      }),
      { numRuns: 5000 }
    )
  })

  it("allowed paths are prefix-closed: every ancestor of an allowed path is allowed", () => {
    FastCheck.assert(
      FastCheck.property(settingsArb, pathArb, (settings, components) => {
        const policy = DenyPolicy.make(settings)
        if (policy.check(components) !== "allowed") return
        for (let i = 0; i <= components.length; i++)
          expect(policy.check(components.slice(0, i))).toBe("allowed")
      }),
      { numRuns: 5000 }
    )
  })

  it("the walk's refusal verdict is one the direct check could also give (never 'allowed')", () => {
    FastCheck.assert(
      FastCheck.property(settingsArb, pathArb, (settings, components) => {
        const policy = DenyPolicy.make(settings)
        const walked = walk(policy, components)
        const direct = policy.check(components)
        if (walked === "allowed") return
        expect(direct).not.toBe("allowed")
        // Reserved wins over everything on both paths.
        if (components.some((c) => c.startsWith(".serverfs-tmp-") || c.startsWith(".serverfs-disabled"))) {
          expect(direct).toBe("reserved")
        }
      }),
      { numRuns: 5000 }
    )
  })

  it("the property generator is not vacuous: it produces allowed and refused paths", () => {
    const sample = FastCheck.sample(FastCheck.tuple(settingsArb, pathArb), { numRuns: 2000, seed: 7 })
    const verdicts = new Set(sample.map(([s, p]) => DenyPolicy.make(s).check(p)))
    expect([...verdicts].sort()).toEqual(["allowed", "denied", "hidden", "reserved"])
  })
})

describe("DenyPolicy.ripgrepExcludes", () => {
  it("passes the built-in rules and plain name globs, never a glob ripgrep would read differently", () => {
    const p = DenyPolicy.make({
      allowHidden: false,
      disableDefaultDeny: false,
      extraDenyGlobs: ["*.log", "internal/**", "logs/", "a\\b", "[x]y", "{a,b}", "docs/secret.md", "/top.txt"]
    })
    const excludes = p.ripgrepExcludes()
    for (const glob of [
      "!.[sS][sS][hH]",
      "!.[aA][wW][sS]",
      "!.[gG][nN][uU][pP][gG]",
      "!.[kK][uU][bB][eE]",
      "!.[eE][nN][vV]",
      "![iI][dD]_[rR][sS][aA]",
      "![iI][dD]_[eE][dD]25519",
      "!*.[pP][eE][mM]",
      "!*.[kK][eE][yY]",
      "!*.[eE][nN][vV]",
      "!.[eE][nN][vV].*"
    ]) {
      expect(excludes).toContain(glob)
    }
    expect(excludes).toContain("!*.log")
    expect(excludes).toContain("!internal")
    expect(excludes).toContain("!logs")
    for (const glob of ["!a\\b", "![x]y", "!{a,b}", "!docs/secret.md", "!top.txt", "!/top.txt"]) {
      expect(excludes).not.toContain(glob)
    }
  })

  it("the built-in excludes catch exactly the names the policy denies, in any ASCII case", () => {
    const policy = DenyPolicy.make({ allowHidden: true, disableDefaultDeny: false, extraDenyGlobs: [] })
    const excludes = policy.ripgrepExcludes().map((e) => e.slice(1))
    // Simple globs (*, literals, [xX] classes) mean the same to ripgrep and to fnmatch.
    // Credential names with random letter cases and a random extra character before or after.
    const BASES = [".ssh", ".aws", ".gnupg", ".kube", ".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
    const bases = [...BASES, "x.pem", "a.key", "b.env", ".env.x", "pem", "key", "sh"]
    const EXTRA = ["", "", "", ".", "x", "K", "\u212A", "\u017F", "-"]
    const nameArb = FastCheck.tuple(
      FastCheck.constantFrom(...bases),
      FastCheck.array(FastCheck.boolean(), { minLength: 12, maxLength: 12 }),
      FastCheck.constantFrom(...EXTRA),
      FastCheck.constantFrom(...EXTRA)
    ).map(([base, flips, before, after]) => {
      const cased = Array.from(base, (c, i) => (flips[i] ? c.toUpperCase() : c)).join("")
      return `${before}${cased}${after}`
    })
    const names = FastCheck.sample(nameArb, { numRuns: 20000, seed: 14 })
    const disagree = names.filter(
      (name) => (policy.checkChild("", name) === "denied") !== excludes.some((g) => fnmatch(name, g))
    )
    expect(disagree).toEqual([])
    expect(names.filter((name) => policy.checkChild("", name) === "denied").length).toBeGreaterThan(500)
  })

  it("releasing the built-in rules releases their excludes too", () => {
    const p = DenyPolicy.make({ allowHidden: true, disableDefaultDeny: true, extraDenyGlobs: [] })
    expect(p.ripgrepExcludes()).toEqual([])
  })
})
