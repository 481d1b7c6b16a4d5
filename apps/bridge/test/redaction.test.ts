/**
 * Host-path confidentiality (spec v0.3 §16, bridge-internals §6 "Redaction"), as a pure unit:
 * absolute paths under the task's workdir become workdir-relative ("." for the root), other
 * absolute paths `<outside-workdir>`; every configured workdir root embedded in free text becomes
 * `<workdir>` (nested roots first); path-valued and path-list keys are rewritten; provider-native
 * id keys are dropped.
 */

// The bridge's redaction is the domain's one home of the rule (HostPathRedaction).
import {
  OUTSIDE_WORKDIR as OUTSIDE,
  HostPathRedaction as Redactor,
  WORKDIR_TEXT as WORKDIR
} from "@serverfs/domain"
import { describe, expect, it } from "vitest"

const ROOT = "/srv/data/work"
const NESTED = "/srv/data/work/nested"
const OTHER = "/srv/other"
const PARENT = "/srv/data"
const redactor = () => new Redactor(ROOT, [ROOT, NESTED, OTHER, PARENT])

describe("paths", () => {
  it("the root is '.', paths under it are relative, with or without trailing slashes", () => {
    const r = redactor()
    expect(r.path(ROOT)).toBe(".")
    expect(r.path(`${ROOT}/`)).toBe(".")
    expect(r.path(`${ROOT}/src/app.ts`)).toBe("src/app.ts")
    expect(r.path(`${ROOT}/src/`)).toBe("src")
    expect(r.path(`${NESTED}/deep/x`)).toBe("nested/deep/x")
    expect(new Redactor(`${ROOT}/`, []).path(`${ROOT}/a`)).toBe("a")
  })

  it("paths outside the workdir are <outside-workdir>, a sibling with the same prefix included", () => {
    const r = redactor()
    for (const p of [
      "/etc/passwd",
      "/",
      PARENT,
      `${PARENT}/`,
      OTHER,
      `${OTHER}/x`,
      `${ROOT}shop/x`,
      `${ROOT}-evil`
    ]) {
      expect(r.path(p), p).toBe(OUTSIDE)
    }
  })

  it("a path that climbs out of the workdir with .. is outside; . and // segments are normalized", () => {
    const r = redactor()
    expect(r.path(`${ROOT}/../../../etc/passwd`)).toBe(OUTSIDE)
    expect(r.path(`${ROOT}/..`)).toBe(OUTSIDE)
    expect(r.path(`${NESTED}/../../other`)).toBe(OUTSIDE)
    expect(r.path(`${ROOT}/src/../lib/x`)).toBe("lib/x")
    expect(r.path(`${ROOT}/./src//a`)).toBe("src/a")
    expect(r.path(`${ROOT}/src/..`)).toBe(".")
  })

  it("a relative value is free text", () => {
    const r = redactor()
    expect(r.path("src/app.ts")).toBe("src/app.ts")
    expect(r.path(`see ${ROOT}/x`)).toBe(`see ${WORKDIR}/x`)
  })
})

describe("free text", () => {
  it("every configured root becomes <workdir>, the longest (nested) first", () => {
    const r = redactor()
    expect(r.text(`cd ${NESTED} && ls ${ROOT}/src ${OTHER}/x ${PARENT}/y`)).toBe(
      `cd ${WORKDIR} && ls ${WORKDIR}/src ${WORKDIR}/x ${WORKDIR}/y`
    )
    expect(r.text(`${NESTED}/deep`)).toBe(`${WORKDIR}/deep`)
    expect(r.text(`a${ROOT}b${ROOT}`)).toBe(`a${WORKDIR}b${WORKDIR}`)
    expect(r.text("nothing to hide: /etc/hosts")).toBe("nothing to hide: /etc/hosts")
  })

  it("no configured root survives, whatever surrounds it", () => {
    const r = redactor()
    const samples = [`${ROOT}shop`, `"${ROOT}"`, `file://${NESTED}/x`, `${PARENT}${ROOT}`, `x=${OTHER};`]
    for (const sample of samples) {
      const out = r.text(sample)
      for (const root of [ROOT, NESTED, OTHER, PARENT]) expect(out, sample).not.toContain(root)
    }
  })

  it("a filesystem root or an empty root is never treated as a workdir root", () => {
    const r = new Redactor("/srv/w", ["/", "", "/srv/w"])
    expect(r.text("/usr/bin and /srv/w/x")).toBe(`/usr/bin and ${WORKDIR}/x`)
  })
})

describe("structured payloads", () => {
  it("path keys become workdir-relative or <outside-workdir>; other strings are free text", () => {
    const r = redactor()
    const out = r.value({
      path: `${ROOT}/a.txt`,
      cwd: ROOT,
      relative_cwd: `${ROOT}/sub`,
      host_path: "/etc",
      file_path: `${NESTED}/n.txt`,
      grantRoot: ROOT,
      blocked_path: "/var/secret",
      command: `cat ${ROOT}/a.txt /etc/x`,
      count: 3,
      ok: true,
      none: null
    })
    expect(out).toEqual({
      path: "a.txt",
      cwd: ".",
      relative_cwd: "sub",
      host_path: OUTSIDE,
      file_path: "nested/n.txt",
      grantRoot: ".",
      blocked_path: OUTSIDE,
      command: `cat ${WORKDIR}/a.txt /etc/x`,
      count: 3,
      ok: true,
      none: null
    })
  })

  it("path-list keys rewrite each path; other lists are free text", () => {
    const r = redactor()
    expect(
      r.value({
        read: [ROOT, `${ROOT}/docs`, "/etc"],
        write: [`${NESTED}/out`],
        readableRoots: ["/usr", ROOT],
        writableRoots: [`${ROOT}/tmp`, 7],
        args: [ROOT, `${ROOT}/x`]
      })
    ).toEqual({
      read: [".", "docs", OUTSIDE],
      write: ["nested/out"],
      readableRoots: [OUTSIDE, "."],
      writableRoots: ["tmp", 7],
      args: [WORKDIR, `${WORKDIR}/x`]
    })
  })

  it("nested objects and arrays are redacted throughout, keys included", () => {
    const r = redactor()
    expect(
      r.value({
        file_changes: [{ path: `${ROOT}/a` }, { path: "/tmp/b" }],
        permissions: { fileSystem: { write: [ROOT] }, note: `under ${OTHER}` },
        [`${ROOT}/key`]: "v"
      })
    ).toEqual({
      file_changes: [{ path: "a" }, { path: OUTSIDE }],
      permissions: { fileSystem: { write: ["."] }, note: `under ${WORKDIR}` },
      [`${WORKDIR}/key`]: "v"
    })
  })

  it("provider-native id keys are dropped at any depth", () => {
    const r = redactor()
    const ids = {
      native_session_id: "s",
      native_turn_id: "t",
      thread_id: "th",
      turn_id: "tu",
      threadId: "th2",
      turnId: "tu2",
      session_id: "se",
      sessionId: "se2"
    }
    expect(r.value({ ...ids, kept: "yes", inner: { ...ids, also: 1 }, list: [{ ...ids }] })).toEqual({
      kept: "yes",
      inner: { also: 1 },
      list: [{}]
    })
  })

  it("record() keeps the shape of its input and does not modify it", () => {
    const r = redactor()
    const input = { text: `at ${ROOT}`, cwd: ROOT }
    expect(r.record(input)).toEqual({ text: `at ${WORKDIR}`, cwd: "." })
    expect(input).toEqual({ text: `at ${ROOT}`, cwd: ROOT })
  })
})
