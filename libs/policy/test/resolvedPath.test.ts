import { describe, expect, it } from "@effect/vitest"
import {
  AccessDenied,
  DeniedPath,
  HiddenPathNotAllowed,
  PathOutsideWorkdir,
  ReservedPath
} from "@serverfs/domain"
import { DenyPolicy, type PathPolicySettings, resolvePath, type Workdir } from "@serverfs/policy"
import { Either } from "effect"

const workdirWith = (settings: Partial<PathPolicySettings> = {}): Workdir => ({
  slot: 3,
  alias: "proj",
  description: null,
  readOnly: true,
  hostPath: "/srv/host/never-shown",
  policy: DenyPolicy.make({ allowHidden: false, disableDefaultDeny: false, extraDenyGlobs: [], ...settings }),
  maxReadBytes: 524288,
  maxReadLines: 500,
  maxWriteBytes: 1048576,
  binaryTransferEnabled: false,
  maxBinaryTransferBytes: 8388608,
  agentMode: "disabled",
  agentRuntimes: []
})

const closed = workdirWith()

const errorOf = (workdir: Workdir, raw: string) => {
  const result = resolvePath(workdir, raw)
  if (Either.isRight(result)) throw new Error(`expected ${JSON.stringify(raw)} to be refused`)
  return result.left
}

const resolved = (workdir: Workdir, raw: string) => {
  const result = resolvePath(workdir, raw)
  if (Either.isLeft(result))
    throw new Error(`expected ${JSON.stringify(raw)} to resolve, got ${result.left._tag}`)
  return result.right
}

describe("resolvePath: refusals map to the tagged errors of @serverfs/domain", () => {
  const refusals: ReadonlyArray<readonly [raw: string, tag: string, why: string]> = [
    ["a\0b", "ACCESS_DENIED", "NUL"],
    ["/etc/passwd\0", "ACCESS_DENIED", "NUL wins over absolute"],
    ["/etc/passwd", "PATH_OUTSIDE_WORKDIR", "absolute"],
    ["~", "PATH_OUTSIDE_WORKDIR", "home"],
    ["~root/.ssh", "PATH_OUTSIDE_WORKDIR", "another home"],
    ["..", "PATH_OUTSIDE_WORKDIR", "parent of the root"],
    ["a/../../b", "PATH_OUTSIDE_WORKDIR", "climbs above the root"],
    [".serverfs-tmp-abc", "RESERVED_PATH", "temp file"],
    ["sub/.serverfs-disabled", "RESERVED_PATH", "sentinel"],
    ["x/../.serverfs-tmp-1", "RESERVED_PATH", "reserved after normalization"],
    [".env", "HIDDEN_PATH_NOT_ALLOWED", ".env is hidden before it is denied"],
    ["a/.git/config", "HIDDEN_PATH_NOT_ALLOWED", "hidden middle component"],
    ["..\\..\\etc", "HIDDEN_PATH_NOT_ALLOWED", "a backslash name starting with . is hidden"],
    ["id_rsa", "DENIED_PATH", "built-in name"],
    ["certs/server.pem", "DENIED_PATH", "built-in glob"],
    ["keys.pem/inner.txt", "DENIED_PATH", "denied ancestor"]
  ]

  it.each(refusals)("%j → %s (%s)", (raw, tag) => {
    const error = errorOf(closed, raw)
    expect(error._tag).toBe(tag)
    expect(error.workdir).toBe("proj")
    expect(error.path).toBe(raw)
  })

  it("NUL → AccessDenied with the fixed reason 'path contains NUL bytes'", () => {
    const error = errorOf(closed, "x\0y")
    expect(error).toBeInstanceOf(AccessDenied)
    if (!(error instanceof AccessDenied)) return
    expect(error.reason).toBe("path contains NUL bytes")
  })

  it("each verdict is an instance of its domain class", () => {
    expect(errorOf(closed, "/x")).toBeInstanceOf(PathOutsideWorkdir)
    expect(errorOf(closed, ".serverfs-tmp-")).toBeInstanceOf(ReservedPath)
    expect(errorOf(closed, ".x")).toBeInstanceOf(HiddenPathNotAllowed)
    expect(errorOf(closed, "id_rsa")).toBeInstanceOf(DeniedPath)
  })

  it("errors never carry the host path", () => {
    for (const [raw] of refusals) {
      const error = errorOf(closed, raw)
      expect(JSON.stringify(error)).not.toContain(closed.hostPath)
      expect(error.message).not.toContain(closed.hostPath)
    }
  })
})

describe("resolvePath: accepted paths", () => {
  it("keeps `requested` verbatim and gives the normalized `relative` and `components`", () => {
    const r = resolved(closed, "./docs//guide/../intro.md/")
    expect(r.requested).toBe("./docs//guide/../intro.md/")
    expect(r.relative).toBe("docs/intro.md")
    expect(r.components).toEqual(["docs", "intro.md"])
    expect(r.workdir).toBe(closed)
  })

  it.each(["", ".", "./", "a/..", "sub/./../"])("%j is the root: relative '' and no components", (raw) => {
    const r = resolved(closed, raw)
    expect(r.requested).toBe(raw)
    expect(r.relative).toBe("")
    expect(r.components).toEqual([])
  })

  it("foo/../bar.txt resolves to bar.txt", () => {
    expect(resolved(closed, "foo/../bar.txt").relative).toBe("bar.txt")
  })

  it("a backslash name is one component (with hidden paths allowed)", () => {
    const r = resolved(workdirWith({ allowHidden: true }), "..\\..\\etc")
    expect(r.components).toEqual(["..\\..\\etc"])
    expect(r.relative).toBe("..\\..\\etc")
  })

  it("the policy of the workdir decides: allowHidden releases .git, disableDefaultDeny releases .env", () => {
    expect(resolved(workdirWith({ allowHidden: true }), "a/.git/config").relative).toBe("a/.git/config")
    expect(errorOf(workdirWith({ allowHidden: true }), ".env")._tag).toBe("DENIED_PATH")
    expect(resolved(workdirWith({ allowHidden: true, disableDefaultDeny: true }), ".env").relative).toBe(
      ".env"
    )
  })

  it("extra globs of the workdir apply (DENIED_PATH)", () => {
    const w = workdirWith({ extraDenyGlobs: ["docs/secret.md", "internal/**"] })
    expect(errorOf(w, "docs/secret.md")._tag).toBe("DENIED_PATH")
    expect(errorOf(w, "a/internal/b")._tag).toBe("DENIED_PATH")
    expect(resolved(w, "docs/public.md").relative).toBe("docs/public.md")
  })

  it("reserved names stay refused with everything released", () => {
    const open = workdirWith({ allowHidden: true, disableDefaultDeny: true })
    expect(errorOf(open, ".serverfs-tmp-x")._tag).toBe("RESERVED_PATH")
    expect(errorOf(open, "a/.serverfs-disabled")._tag).toBe("RESERVED_PATH")
  })
})
