/**
 * The one submit rule both apps apply (spec v0.3 §10, v0.7 §2.1; issue 11): agent mode, runtime
 * allowlist, profile rank, native runtimes only with workspace-write, no backslash in the path —
 * checked in that order, each refusal with its frozen code.
 */
import { describe, expect, it } from "@effect/vitest"
import { authorizeSubmission, DenyPolicy, type Workdir } from "@serverfs/policy"
import { Either } from "effect"

const workdir = (agentMode: Workdir["agentMode"], agentRuntimes: Workdir["agentRuntimes"]): Workdir => ({
  slot: 1,
  alias: "proj",
  description: null,
  readOnly: false,
  hostPath: "/srv/host/never-shown",
  policy: DenyPolicy.make({ allowHidden: false, disableDefaultDeny: false, extraDenyGlobs: [] }),
  maxReadBytes: 524288,
  maxReadLines: 500,
  maxWriteBytes: 1048576,
  binaryTransferEnabled: false,
  maxBinaryTransferBytes: 8388608,
  agentMode,
  agentRuntimes
})

const refusal = (w: Workdir, runtime: string, profile: "review" | "workspace-write", path = "") => {
  const result = authorizeSubmission(w, { runtime, profile, path })
  return Either.isLeft(result) ? `${result.left._tag}: ${result.left.message}` : "ok"
}

describe("authorizeSubmission", () => {
  it("each refusal has its code and one message, in the rule's order", () => {
    const write = workdir("workspace-write", ["fake", "codex"])
    expect(refusal(workdir("disabled", ["fake"]), "fake", "review")).toBe(
      "AGENT_DISABLED: Agent delegation is disabled for proj"
    )
    expect(refusal(write, "claude", "workspace-write")).toBe(
      "AGENT_RUNTIME_NOT_ALLOWED: runtime 'claude' is not allowed for proj"
    )
    expect(refusal(workdir("review", ["fake"]), "fake", "workspace-write")).toBe(
      "AGENT_PROFILE_NOT_ALLOWED: profile workspace-write is not allowed for runtime fake in proj"
    )
    expect(refusal(write, "codex", "review")).toBe(
      "AGENT_PROFILE_NOT_ALLOWED: profile review is not allowed for runtime codex in proj"
    )
    // The path rule comes last: a refused profile is reported even with a bad path.
    expect(refusal(write, "codex", "review", "a\\b")).toMatch(/^AGENT_PROFILE_NOT_ALLOWED/)
    expect(refusal(write, "fake", "review", "docs\\x")).toBe(
      "INVALID_WORKDIR_PATH: the task path is not a valid workdir path"
    )
  })

  it("allowed submissions pass", () => {
    expect(refusal(workdir("workspace-write", ["fake", "codex"]), "fake", "review", "src/a")).toBe("ok")
    expect(refusal(workdir("workspace-write", ["codex"]), "codex", "workspace-write")).toBe("ok")
    expect(refusal(workdir("review", ["fake"]), "fake", "review")).toBe("ok")
  })
})
