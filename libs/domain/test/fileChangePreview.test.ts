/**
 * The file-change preview of an approval (issue 15 item 2): unified diffs built from a change,
 * redacted, and bounded per change and per approval in UTF-8 bytes with a visible marker.
 */
import { describe, expect, it } from "vitest"
import { MAX_FILE_CHANGE_DIFF_BYTES, MAX_FILE_CHANGES_DIFF_BYTES } from "../src/agent/ContractLimits.js"
import {
  fitApproval,
  hunk,
  previewFileChanges,
  redactDiffText,
  retainedDiff,
  truncationMarker,
  wholeFileDiff
} from "../src/agent/FileChangePreview.js"
import type { ApprovalPayload } from "../src/agent/Interactions.js"
import { HostPathRedaction } from "../src/redaction/HostPathRedaction.js"

const ROOT = "/srv/data/work"
const OTHER = "/srv/other"
const R = new HostPathRedaction(ROOT, [OTHER])
const bytes = (text: string) => Buffer.byteLength(text, "utf8")
const MARKER = /… \[diff truncated: (\d+) more bytes\]\n$/

describe("unified diffs", () => {
  it("a new file: every line added, against /dev/null", () => {
    const [change] = previewFileChanges(
      [{ path: "src/a.ts", kind: "add", diff: wholeFileDiff(null, "one\ntwo\n") }],
      R
    )
    expect(change).toEqual({
      path: "src/a.ts",
      kind: "add",
      diff: "--- /dev/null\n+++ b/src/a.ts\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    })
  })

  it("a rewrite: the changed middle with three lines of context and real line numbers", () => {
    const before = ["1", "2", "3", "4", "5", "6", "7", "8", "9"].map((l) => `${l}\n`).join("")
    const after = before.replace("5\n", "five\n")
    expect(hunk(before, after)).toBe("@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n")
    expect(hunk(before, before)).toBe("")
  })

  it("a missing final newline is marked; a delete goes to /dev/null", () => {
    const [change] = previewFileChanges([{ path: "x", kind: "delete", diff: wholeFileDiff("a\nb", null) }], R)
    expect(change?.diff).toBe(
      "--- a/x\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n\\ No newline at end of file\n"
    )
  })

  it("CRLF lines keep their ends", () => {
    const diff = hunk("a\r\nb\r\n", "a\r\nc\r\n")
    expect(diff).toBe("@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n")
  })

  it("a provider's own headers are replaced by the display path's", () => {
    const [change] = previewFileChanges(
      [{ path: "a.ts", kind: "update", diff: `--- ${ROOT}/a.ts\n+++ ${ROOT}/a.ts\n@@ -1 +1 @@\n-x\n+y\n` }],
      R
    )
    expect(change?.diff).toBe("--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-x\n+y\n")
  })

  it("binary-looking content (a NUL byte) is not shown", () => {
    const [change] = previewFileChanges(
      [{ path: "b.bin", kind: "add", diff: wholeFileDiff(null, "PK\u0000\u0003") }],
      R
    )
    expect(change?.diff).toBe("--- /dev/null\n+++ b/b.bin\nBinary files differ\n")
  })

  it("a change without a diff keeps its path and kind only", () => {
    expect(previewFileChanges([{ path: "<outside-workdir>" }], R)).toEqual([{ path: "<outside-workdir>" }])
  })
})

describe("host paths in diff text", () => {
  it("the workdir becomes relative, other roots <workdir>, other absolute paths <path>", () => {
    const text = `+import "${ROOT}/src/a.ts"\n+cat /tmp/sfx-1234/secret.txt ${OTHER}/b /home/u/.codex\n`
    expect(redactDiffText(text, R)).toBe(`+import "src/a.ts"\n+cat <path> <workdir>/b <path>\n`)
  })

  it("code survives: comments, division, URLs, a single /word and a shebang", () => {
    const text =
      "+// comment\n+/* block */ x = a / b\n+see https://example.com/a/b\n+cd /tmp\n#!/usr/bin/env node\n"
    expect(redactDiffText(text, R)).toBe(text)
  })
})

describe("bounds", () => {
  it("a change over the per-change bound is cut at a line end with the marker", () => {
    const content = Array.from({ length: 4000 }, (_, i) => `line ${i}\n`).join("")
    const [change] = previewFileChanges(
      [{ path: "big.txt", kind: "add", diff: wholeFileDiff(null, content) }],
      R
    )
    const diff = change?.diff ?? ""
    expect(change?.diff_truncated).toBe(true)
    expect(bytes(diff)).toBeLessThanOrEqual(MAX_FILE_CHANGE_DIFF_BYTES)
    const match = MARKER.exec(diff)
    expect(match).not.toBeNull()
    const kept = diff.slice(0, diff.length - (match?.[0].length ?? 0))
    expect(kept.endsWith("\n")).toBe(true)
    const full = `--- /dev/null\n+++ b/big.txt\n${wholeFileDiff(null, content)}`
    expect(full.startsWith(kept)).toBe(true)
    expect(Number(match?.[1])).toBe(bytes(full) - bytes(kept))
  })

  it("a diff exactly at the bound is not cut", () => {
    const head = "--- /dev/null\n+++ b/x\n"
    const body = `${"y".repeat(MAX_FILE_CHANGE_DIFF_BYTES - bytes(head) - 1)}\n`
    const [change] = previewFileChanges([{ path: "x", kind: "add", diff: body }], R)
    expect(change?.diff_truncated).toBeUndefined()
    expect(bytes(change?.diff ?? "")).toBe(MAX_FILE_CHANGE_DIFF_BYTES)
  })

  it("one over-long line is cut at a code point boundary, never inside a character", () => {
    const line = `+${"é€😀".repeat(5000)}\n`
    const [change] = previewFileChanges([{ path: "u.txt", kind: "add", diff: line }], R)
    const diff = change?.diff ?? ""
    expect(bytes(diff)).toBeLessThanOrEqual(MAX_FILE_CHANGE_DIFF_BYTES)
    expect(diff).not.toContain("\uFFFD")
    expect(Buffer.from(diff, "utf8").toString("utf8")).toBe(diff)
    expect(diff).toMatch(/\n… \[diff truncated: \d+ more bytes\]\n$/)
  })

  it("many changes share the approval's bound; the ones without room keep path and kind", () => {
    const content = Array.from({ length: 3000 }, (_, i) => `row ${i} ü\n`).join("")
    const changes = Array.from({ length: 10 }, (_, i) => ({
      path: `f${i}.txt`,
      kind: "add" as const,
      diff: wholeFileDiff(null, content)
    }))
    const out = previewFileChanges(changes, R)
    const total = out.reduce((n, c) => n + bytes(c.diff ?? ""), 0)
    expect(total).toBeLessThanOrEqual(MAX_FILE_CHANGES_DIFF_BYTES)
    expect(out.every((c) => c.diff_truncated === true)).toBe(true)
    expect(out.slice(0, 4).every((c) => c.diff !== undefined)).toBe(true)
    expect(out.at(-1)).toEqual({ path: "f9.txt", kind: "add", diff_truncated: true })
  })

  it("a huge diff is cut before redaction; the marker still counts every byte left out", () => {
    const line = `+${ROOT}/src/x.ts\n`
    const content = line.repeat(200_000)
    const retained = retainedDiff(content)
    expect(bytes(retained.diff)).toBeLessThanOrEqual(4 * MAX_FILE_CHANGE_DIFF_BYTES)
    expect(retained.diff.endsWith("\n")).toBe(true)
    expect(bytes(retained.diff) + retained.omittedBytes).toBe(bytes(content))
    const [change] = previewFileChanges([{ path: "x", kind: "update", ...retained }], R)
    const diff = change?.diff ?? ""
    expect(diff).not.toContain(ROOT)
    const shown = diff.slice(0, diff.length - (MARKER.exec(diff)?.[0].length ?? 0))
    const redactedTotal = bytes("--- a/x\n+++ b/x\n") + bytes("+src/x.ts\n") * 200_000
    expect(Number(MARKER.exec(diff)?.[1])).toBe(
      redactedTotal -
        bytes(shown) +
        (bytes(line) - bytes("+src/x.ts\n")) * (200_000 - retained.diff.split("\n").length + 1)
    )
  })

  it("the marker names the bytes left out", () => {
    expect(truncationMarker(12)).toBe("… [diff truncated: 12 more bytes]\n")
  })
})

describe("fitting the approval", () => {
  it("JSON escaping cannot push an approval past the interaction limit", () => {
    // Quotes and tabs double in JSON: 64 KiB of diff text would be ~128 KiB of payload.
    const content = Array.from({ length: 6000 }, () => '\t"q"\t"q"\n').join("")
    const changes = Array.from({ length: 8 }, (_, i) => ({
      path: `f${i}`,
      kind: "add" as const,
      diff: wholeFileDiff(null, content)
    }))
    const payload = fitApproval(
      (bounds): ApprovalPayload => ({
        category: "file_change",
        title: "t",
        available_decisions: ["approve_once"],
        file_changes: previewFileChanges(changes, R, bounds)
      })
    )
    expect(bytes(JSON.stringify(payload))).toBeLessThanOrEqual(65_536)
    expect(payload.file_changes?.[0]?.diff).toMatch(MARKER)
  })
})
