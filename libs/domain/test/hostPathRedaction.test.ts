/**
 * The one home of host-path redaction (spec v0.3 §16): what the bridge stores and returns and
 * what the adapters show pass through these functions.
 */
import { describe, expect, it } from "vitest"
import {
  HostPathRedaction,
  OUTSIDE_WORKDIR,
  PATH_TEXT,
  WORKDIR_TEXT
} from "../src/redaction/HostPathRedaction.js"

const ROOT = "/srv/data/work"
const OTHER = "/srv/other"
const redaction = () => new HostPathRedaction(ROOT, [OTHER])

describe("messages (error texts)", () => {
  it("the workdir becomes <workdir>; a home directory, a temp file and any other absolute path <path>", () => {
    const text = `spawn failed in ${ROOT}/src: /home/alice/.codex/auth.json missing, see /tmp/tmp.x1Yz/log (${OTHER}/a)`
    const out = redaction().message(text)
    expect(out).toBe(
      `spawn failed in ${WORKDIR_TEXT}/src: ${PATH_TEXT} missing, see ${PATH_TEXT} (${WORKDIR_TEXT}/a)`
    )
    for (const secret of [ROOT, OTHER, "/home/alice", "/tmp/"]) expect(out).not.toContain(secret)
  })

  it("a URL is kept; a path ends at a colon; the text is bounded in code points", () => {
    const r = redaction()
    expect(r.message("see http://127.0.0.1:9/v1/responses")).toBe("see http://127.0.0.1:9/v1/responses")
    expect(r.message("cannot open /srv/x/secret.txt: denied")).toBe(`cannot open ${PATH_TEXT}: denied`)
    expect(r.message("/etc/passwd")).toBe(PATH_TEXT)
    expect(r.message("é".repeat(5000))).toBe(`${"é".repeat(2000)}…`)
    expect(r.message("x".repeat(50), 10)).toBe(`${"x".repeat(10)}…`)
  })
})

describe("command lines", () => {
  it("the root as a whole component becomes relative; a sibling with the same prefix is kept", () => {
    const r = redaction()
    expect(r.command(`/bin/bash -lc 'cat ${ROOT}/src/a.ts > ${ROOT}/out'`)).toBe(
      "/bin/bash -lc 'cat src/a.ts > out'"
    )
    expect(r.command(`cd ${ROOT} && ls ${ROOT}/`)).toBe("cd . && ls .")
    expect(r.command(`ls ${ROOT}_evil/x`)).toBe(`ls ${ROOT}_evil/x`)
    expect(r.text(r.command(`cp ${OTHER}/a ${ROOT}_x`))).toBe(`cp ${WORKDIR_TEXT}/a ${WORKDIR_TEXT}_x`)
    expect(r.command("rm /tmp/x")).toBe("rm /tmp/x")
    expect(new HostPathRedaction("/").command("ls /etc")).toBe("ls /etc")
  })
})

describe("structured values", () => {
  it("path keys are relative or <outside-workdir>, lists of paths too, native ids dropped", () => {
    const out = redaction().record({
      cwd: `${ROOT}/src`,
      file_path: "/etc/shadow",
      read: [`${ROOT}/a`, "/home/alice"],
      write: ROOT,
      threadId: "thr_1",
      nested: { text: `in ${OTHER}/x`, session_id: "s" }
    })
    expect(out).toEqual({
      cwd: "src",
      file_path: OUTSIDE_WORKDIR,
      read: ["a", OUTSIDE_WORKDIR],
      write: ".",
      nested: { text: `in ${WORKDIR_TEXT}/x` }
    })
  })
})
