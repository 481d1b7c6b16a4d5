import { describe, expect, it } from "@effect/vitest"
import * as Domain from "@serverfs/domain"
import {
  AccessDenied,
  AGENT_ERROR_CODES,
  AGENT_ERRORS,
  agentError,
  FilesystemErrorCode,
  LineTooLarge,
  PathOutsideWorkdir,
  renderError,
  WorkdirNotFound
} from "@serverfs/domain"
import { Schema } from "effect"

describe("error texts", () => {
  it("path-bearing errors read `CODE: workdir:path — phrase`", () => {
    expect(renderError(new PathOutsideWorkdir({ workdir: "test", path: "../x" }))).toBe(
      "PATH_OUTSIDE_WORKDIR: test:../x — resolved path escapes the workdir"
    )
  })

  it("an unknown alias is quoted like the reference", () => {
    expect(renderError(new WorkdirNotFound({ workdir: "nope" }))).toBe(
      "WORKDIR_NOT_FOUND: 'nope' is not a configured workdir"
    )
  })

  it("parameters appear in the phrase", () => {
    expect(renderError(new LineTooLarge({ workdir: "w", path: "a.txt", line: 7, maxBytes: 10 }))).toBe(
      "LINE_TOO_LARGE: w:a.txt — line 7 exceeds 10 bytes"
    )
  })

  it("control characters in a caller's path are escaped, never echoed raw", () => {
    const text = renderError(
      new AccessDenied({ workdir: "w", path: "a\u0000b\nc", reason: "path contains NUL bytes" })
    )
    expect([...text].some((c) => c.charCodeAt(0) < 0x20)).toBe(false)
    expect(text).toContain("a\\u0000b\\u000ac")
  })

  it("very long paths are shortened", () => {
    const text = renderError(new PathOutsideWorkdir({ workdir: "w", path: "/x".repeat(5000) }))
    expect(text.length).toBeLessThan(400)
  })

  it("every exported error class has a frozen code as its tag", () => {
    const codes = new Set<string>([...FilesystemErrorCode.literals, ...AGENT_ERROR_CODES])
    const tags = (Object.values(Domain) as ReadonlyArray<unknown>)
      .filter(
        (v): v is { _tag: string } => typeof v === "function" && "_tag" in v && typeof v._tag === "string"
      )
      .map((cls) => cls._tag)
    expect(tags.length).toBeGreaterThan(90)
    for (const tag of tags) expect(codes.has(tag), tag).toBe(true)
    expect(Schema.is(FilesystemErrorCode)("NOT_A_CODE")).toBe(false)
  })
})

describe("agent-plane errors", () => {
  it("one class per code, built by code, rendered `CODE: message`", () => {
    for (const code of AGENT_ERROR_CODES) {
      const error = agentError(code, "detail text")
      expect(error._tag).toBe(code)
      expect(error).toBeInstanceOf(AGENT_ERRORS[code])
      expect(renderError(error)).toBe(`${code}: detail text`)
    }
  })
})
